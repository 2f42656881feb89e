/**
 * A JSON syntax error with its line and column. JSON.parse says what is wrong but not always where
 * ("Unexpected token '}', ... is not valid JSON" has no position), so the text is parsed again by
 * jsonc-parser, which reports the offset of its first error.
 */
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { errors, type LuminaError } from '../src/errors.js';

const WHY: Record<string, string> = {
  InvalidSymbol: 'unexpected characters',
  InvalidNumberFormat: 'a malformed number',
  PropertyNameExpected: 'a property name in double quotes is expected',
  ValueExpected: 'a value is expected',
  ColonExpected: 'a ":" is expected',
  CommaExpected: 'a "," is expected',
  CloseBraceExpected: 'a "}" is expected',
  CloseBracketExpected: 'a "]" is expected',
  EndOfFileExpected: 'nothing may follow the value',
  InvalidCommentToken: 'comments are not allowed',
  UnexpectedEndOfComment: 'a comment is not closed',
  UnexpectedEndOfString: 'a string is not closed',
  UnexpectedEndOfNumber: 'a number is cut short',
  InvalidUnicode: 'a bad \\u escape',
  InvalidEscapeCharacter: 'a bad escape',
  InvalidCharacter: 'a control character inside a string',
};

/** 1-based line and column (in UTF-16 units, as editors count) of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** CONFIG_PARSE for `text` that JSON.parse refused with `cause`: where, what, and the text found there. */
export function jsonParseError(file: string, text: string, cause: Error): LuminaError {
  const found: ParseError[] = [];
  parse(text, found, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = found[0];
  if (!first) return errors.configParse(file, cause.message);
  const at = { offset: first.offset, ...lineColumn(text, first.offset) };
  const snippet = text.slice(first.offset, first.offset + Math.max(first.length, 1)).split('\n')[0].slice(0, 40);
  const code = printParseErrorCode(first.error);
  const what = WHY[code] ?? code;
  return errors.configParse(file, snippet ? `${what}, found ${JSON.stringify(snippet)}` : `${what}, found the end of the file`, at);
}
