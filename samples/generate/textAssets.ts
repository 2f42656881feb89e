/**
 * Text assets (FORMAT.md "Text assets and sidecars"): RmlUi documents and style sheets and Luau
 * scripts, each with a `.lmeta` sidecar holding its GUID.
 */
import type { Random } from './random.js';
import type { TextExtension } from './planProject.js';

/** The sidecar's bytes: `{"guid": "<32 hex>"}` and a newline. */
export function lmetaText(guid: string): string {
  return `{"guid": "${guid}"}\n`;
}

/** Plausible content for a generated text asset named `name`. */
export function textAssetContent(ext: TextExtension, name: string, rnd: Random): string {
  switch (ext) {
    case 'rml': {
      const buttons = Array.from({ length: rnd.int(1, 5) }, (_, i) => `      <button id="option_${i}" onclick="select(${i})">Option ${i + 1}</button>`);
      return [
        '<rml>',
        '  <head>',
        `    <title>${name}</title>`,
        `    <link type="text/rcss" href="${name}.rcss"/>`,
        '  </head>',
        '  <body>',
        `    <div class="panel" id="${name.toLowerCase()}">`,
        ...buttons,
        '    </div>',
        '  </body>',
        '</rml>',
        '',
      ].join('\n');
    }
    case 'rcss': {
      const hue = rnd.int(0, 255).toString(16).padStart(2, '0');
      return [
        'body {',
        '  font-family: LatoLatin;',
        `  font-size: ${rnd.int(12, 24)}dp;`,
        '}',
        '.panel {',
        `  background-color: #${hue}2030e0;`,
        `  padding: ${rnd.int(4, 32)}dp;`,
        '}',
        'button:hover {',
        '  color: #ffd860;',
        '}',
        '',
      ].join('\n');
    }
    case 'luau': {
      const speed = rnd.int(100, 900);
      return [
        '--!strict',
        `-- ${name}: generated gameplay script`,
        `local ${name} = {}`,
        '',
        `local SPEED: number = ${speed}`,
        '',
        `function ${name}.tick(entity: any, dt: number)`,
        '  entity.position += entity.forward * SPEED * dt',
        'end',
        '',
        `return ${name}`,
        '',
      ].join('\n');
    }
  }
}
