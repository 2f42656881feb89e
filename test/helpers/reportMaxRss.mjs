// Preloaded into a CLI child (`node --import <this>`): at exit, writes the process's peak RSS in
// bytes to the file named by LC_TEST_MAX_RSS_FILE, so a test can bound the child's memory.
import fs from 'node:fs';

const file = process.env.LC_TEST_MAX_RSS_FILE;
if (file) process.on('exit', () => fs.writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
