// Speech text processing for the brain's answers: pure, no I/O.
export { createSmartChunker, chunkText, SMART_CHUNKER_DEFAULTS } from "./smart-chunker.js";
export type { SmartChunker, SmartChunkerOptions } from "./smart-chunker.js";
export { toSpeakable } from "./speakable-text.js";
export {
  createDirectiveParser,
  parseVoiceDirective,
  DIRECTIVE_PARSER_DEFAULTS,
  VOICE_DIRECTIVE_KEYS,
} from "./voice-directive.js";
export type {
  DirectiveParser,
  DirectiveParserOptions,
  DirectiveParseResult,
  VoiceDirective,
} from "./voice-directive.js";
