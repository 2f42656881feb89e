#!/usr/bin/env python3
"""An outside tool's reader, written from ../shared/FORMAT.md alone (no code shared with the
TypeScript side): it walks a pak, every entry's bytes, the LCKD files under Saved/Cooked and the
LREG registry and LSHC shader caches, checks every hash and layout rule it can, and prints a JSON summary.

    read_lumina.py <pak>... [--cooked DIR]
"""
import json
import struct
import sys
import zlib

M64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = 11400714785074694791, 14029467366897019727, 1609587929392839161, 9650029242287828579, 2870177450012600261


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, lane):
    acc = (acc + lane * P2) & M64
    return (_rotl(acc, 31) * P1) & M64


def _merge(acc, val):
    acc ^= _round(0, val)
    return (acc * P1 + P4) & M64


def xxh64(data, seed=0):
    n = len(data)
    i = 0
    if n >= 32:
        v1 = (seed + P1 + P2) & M64
        v2 = (seed + P2) & M64
        v3 = seed
        v4 = (seed - P1) & M64
        while i + 32 <= n:
            a, b, c, d = struct.unpack_from('<4Q', data, i)
            v1, v2, v3, v4 = _round(v1, a), _round(v2, b), _round(v3, c), _round(v4, d)
            i += 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & M64
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        (k,) = struct.unpack_from('<Q', data, i)
        h ^= _round(0, k)
        h = (_rotl(h, 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        (k,) = struct.unpack_from('<I', data, i)
        h ^= (k * P1) & M64
        h = (_rotl(h, 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M64
        h = (_rotl(h, 11) * P1) & M64
        i += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    h ^= h >> 32
    return h


class Bad(Exception):
    pass


class R:
    def __init__(self, b, pos=0):
        self.b, self.p = b, pos

    def take(self, n):
        if n < 0 or self.p + n > len(self.b):
            raise Bad(f'read of {n} bytes at {self.p} runs past {len(self.b)}')
        v = self.b[self.p:self.p + n]
        self.p += n
        return v

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack('<I', self.take(4))[0]

    def i32(self):
        return struct.unpack('<i', self.take(4))[0]

    def u64(self):
        return struct.unpack('<Q', self.take(8))[0]

    def fstring(self):
        n = self.u32()
        if n > 65535:
            raise Bad(f'FString of {n} bytes')
        return self.take(n).decode('utf-8')

    def guid(self):
        return self.take(16).hex()


BLOCK = 65536


def inflate_blocks(stored, sizes, raw_size):
    out, pos = bytearray(), 0
    for i, s in enumerate(sizes):
        try:
            part = zlib.decompress(stored[pos:pos + s], -15)
        except zlib.error as e:
            raise Bad(f'block {i} does not inflate: {e}')
        want = BLOCK if i < len(sizes) - 1 else raw_size - BLOCK * (len(sizes) - 1)
        if len(part) != want:
            raise Bad(f'block {i} inflates to {len(part)}, not {want}')
        out += part
        pos += s
    if pos != len(stored):
        raise Bad('block sizes do not add up to the stored size')
    return bytes(out)


def read_pak(path):
    b = open(path, 'rb').read()
    r = R(b)
    magic, version, count, flags, toc_off, toc_size = struct.unpack_from('<4I2Q', b, 0)
    if magic != 0x4B41504C or b[:4] != b'LPAK' or version != 1:
        raise Bad('bad pak header')
    if toc_off + toc_size + 16 != len(b):
        raise Bad('toc does not end 16 bytes before the end')
    toc = b[toc_off:toc_off + toc_size]
    foot_hash, foot_magic, zero = struct.unpack_from('<QII', b, len(b) - 16)
    if foot_magic != 0x4B41504C or zero != 0 or foot_hash != xxh64(toc):
        raise Bad('bad footer')
    t = R(toc)
    mount, priority, base = t.fstring(), t.i32(), t.u64()
    if not (flags & 1) and base != 0:
        raise Bad('a non-patch pak carries a base hash')
    entries, last = {}, None
    for _ in range(count):
        p = t.fstring()
        raw_p = p.encode('utf-8')
        if last is not None and raw_p <= last:
            raise Bad(f'entries not sorted by path bytes at {p}')
        last = raw_p
        segs = p.split('/')
        if not p.startswith('/') or '..' in segs or '' in segs[1:]:
            raise Bad(f'bad path {p}')
        off, stored, raw, h, method, bs = t.u64(), t.u64(), t.u64(), t.u64(), t.u8(), t.u32()
        if bs != BLOCK:
            raise Bad('blockSize is not 65536')
        if method == 2:
            entries[p] = None
            continue
        data = b[off:off + stored]
        if off < 32 or off + stored > toc_off:
            raise Bad(f'{p}: stored bytes outside the data region')
        if method == 0:
            rawb = data
        elif method == 1:
            n = t.u32()
            sizes = [t.u32() for _ in range(n)]
            if n != max(1, -(-raw // BLOCK)):
                raise Bad(f'{p}: {n} blocks for {raw} bytes')
            rawb = inflate_blocks(data, sizes, raw)
        else:
            raise Bad(f'{p}: method {method}')
        if len(rawb) != raw or xxh64(rawb) != h:
            raise Bad(f'{p}: hash or size mismatch')
        entries[p] = rawb
    if t.p != len(toc):
        raise Bad('bytes left in the toc')
    return {'mount': mount, 'priority': priority, 'patch': bool(flags & 1), 'base': f'{base:016x}', 'entries': entries}


def read_lckd(b):
    r = R(b)
    if r.take(4) != b'LCKD' or r.u32() != 1:
        raise Bad('bad LCKD header')
    raw, h, method, bs, n = r.u64(), r.u64(), r.u8(), r.u32(), r.u32()
    sizes = [r.u32() for _ in range(n)]
    stored = b[r.p:]
    if sum(sizes) != len(stored) or bs != BLOCK:
        raise Bad('LCKD block table does not match the file')
    rawb = inflate_blocks(stored, sizes, raw) if method == 1 else stored
    if len(rawb) != raw or xxh64(rawb) != h:
        raise Bad('LCKD hash mismatch')
    return rawb


def read_package_header(b):
    tag, version, ioff, icount, eoff, ecount, odoff, thumb = struct.unpack_from('<Iiqiqiqq', b, 0)
    if tag != 0x9E2A83C1 or version != 2 or thumb != 0:
        raise Bad('a cooked package is version 2 without a thumbnail')
    r = R(b, eoff)
    names = []
    for _ in range(ecount):
        r.guid()
        names.append(r.fstring())
        r.fstring()
        off, size = struct.unpack('<qq', r.take(16))
        flags, _aflags = r.u32(), r.u32()
        if flags & (0x1 | 0x4 | 0x8):
            raise Bad(f'export {names[-1]} should have been stripped')
        if odoff + off + size > len(b):
            raise Bad('export past the end')
    return names


def read_registry(b):
    if xxh64(b[:-8]) != struct.unpack('<Q', b[-8:])[0]:
        raise Bad('registry hash mismatch')
    r = R(b)
    if r.take(4) != b'LREG' or r.u32() != 1:
        raise Bad('bad LREG header')
    assets, last = [], ''
    for _ in range(r.u32()):
        g = r.guid()
        if g <= last:
            raise Bad('assets not sorted by GUID')
        last = g
        name, cls, pkg, flags = r.fstring(), r.fstring(), r.fstring(), r.u32()
        deps = [(r.guid(), r.u8()) for _ in range(r.u32())]
        if any(t not in (0, 1) for _, t in deps):
            raise Bad('bad dependency type')
        assets.append({'guid': g, 'name': name, 'class': cls, 'path': pkg, 'flags': flags, 'deps': len(deps)})
    texts = [{'guid': r.guid(), 'path': r.fstring()} for _ in range(r.u32())]
    if r.p != len(b) - 8:
        raise Bad('bytes left in the registry')
    return {'assets': assets, 'texts': texts}


STAGES = ('vertex', 'fragment', 'compute')


def read_shader_cache(b):
    """LSHC: per permutation its key must be the xxh64 of its text, keys ascending, code SPIR-V."""
    if len(b) < 24 or xxh64(b[:-8]) != struct.unpack('<Q', b[-8:])[0]:
        raise Bad('shader cache hash mismatch')
    r = R(b)
    if r.take(4) != b'LSHC' or r.u32() != 1:
        raise Bad('bad LSHC header')
    compiler = r.fstring()
    perms, last = [], -1
    for _ in range(r.u32()):
        key = r.u64()
        source, entry, stage = r.fstring(), r.fstring(), r.u8()
        if stage >= len(STAGES):
            raise Bad(f'bad shader stage {stage}')
        defines = [r.fstring() for _ in range(r.u32())]
        if defines != sorted(defines, key=lambda d: d.encode('utf-8')):
            raise Bad('defines not sorted by bytes')
        size = r.u32()
        code = r.take(size)
        if size % 4 or size < 20 or struct.unpack('<I', code[:4])[0] != 0x07230203:
            raise Bad(f'{source} {entry}: not SPIR-V')
        text = '\n'.join([source, entry, STAGES[stage]] + defines).encode('utf-8')
        if xxh64(text) != key:
            raise Bad(f'{source} {entry}: key is not the hash of the permutation')
        if key < last:
            raise Bad('permutations not sorted by key')
        last = key
        perms.append({'key': f'{key:016x}', 'source': source, 'entry': entry, 'stage': STAGES[stage], 'defines': defines, 'codeSize': size})
    if r.p != len(b) - 8:
        raise Bad('bytes left in the shader cache')
    return {'compiler': compiler, 'permutations': perms}


def main(argv):
    cooked = None
    if '--cooked' in argv:
        i = argv.index('--cooked')
        cooked = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    out = {'paks': {}, 'packages': 0}
    for path in argv:
        pak = read_pak(path)
        for p, rawb in pak['entries'].items():
            if rawb is None:
                continue
            if p == '/AssetRegistry.bin':
                out['registry'] = read_registry(rawb)
            elif p == '/ShaderCache.bin':
                out.setdefault('shaders', {})[path] = read_shader_cache(rawb)
            elif p.endswith('.lasset'):
                read_package_header(rawb)
                out['packages'] += 1
                if cooked:
                    with open(cooked + p, 'rb') as f:
                        if read_lckd(f.read()) != rawb:
                            raise Bad(f'{p}: Saved/Cooked differs from the pak entry')
        out['paks'][path] = {k: v for k, v in pak.items() if k != 'entries'}
        out['paks'][path]['paths'] = sorted(pak['entries'])
    print(json.dumps(out))


if __name__ == '__main__':
    try:
        main(sys.argv[1:])
    except Bad as e:
        print(f'bad: {e}', file=sys.stderr)
        sys.exit(1)
