// The error tables: kind names by the number wasm sends, this layer's own
// kinds, and the message of each wasm kind from its numbers. Tables only,
// no logic (errors.js is their one reader).

import { DTYPES } from './dtypes.js';

// The core's `Expected` and `Field`, in declaration order.
export const EXPECTED = [
  'a JSON value', 'an object', 'an array', 'a string', "':'", "',' or '}'", "',' or ']'",
  'a digit', 'a non-negative integer', 'the end of the header',
];
export const FIELD = ['dtype', 'shape', 'data_offsets'];

// Error kinds by the number wasm sends: `kinds!` in wasm/src/error.rs, the
// same names in the same order (a test there reads this list).
export const KINDS = Object.freeze([
  // The core's (its `ErrorKind`, in declaration order):
  'HeaderTooSmall', 'HeaderTooLarge', 'InvalidHeaderLength', 'InvalidUtf8',
  'UnexpectedEnd', 'UnexpectedByte', 'InvalidEscape', 'LoneSurrogate',
  'ControlCharacterInString', 'InvalidNumber', 'NestingTooDeep',
  'MetadataNotObject', 'MetadataValueNotString', 'DuplicateMetadata',
  'DuplicateMetadataKey', 'TensorNotObject', 'DtypeNotString', 'UnknownDtype',
  'MissingField', 'DuplicateField', 'DataOffsetsNotPair', 'IntegerTooLarge',
  'DuplicateTensorName', 'CapacityExceeded',
  'InvalidOffset', 'ValidationOverflow', 'MisalignedSlice', 'TensorInvalidInfo',
  'MetadataIncompleteBuffer',
  'DtypeMismatch', 'Misaligned', 'LengthMismatch', 'TooLargeForTarget', 'ReadOutOfRange',
  'Storage',
  'SliceTooManyIndices', 'SliceOutOfRange', 'SliceInvalidRange', 'SliceSubByte',
  'BufferTooSmall', 'ReservedName', 'DataLengthMismatch', 'DataOutOfOrder', 'Sink',
  // This layer's (wasm/src):
  'OffsetTooLarge', 'DimensionTooLarge', 'InvalidArgument',
  // A core kind missing from the list (its tests keep this from shipping):
  'Unlisted',
]);

// The kinds this JS layer raises itself (never numbered by wasm).
export const JS_KINDS = Object.freeze([
  'NotInMemory', 'NoSource', 'HeaderIncomplete', 'ReadFailed', 'Http', 'IndexInvalid',
  'IndexMismatch', 'ShardMissing', 'WriterUnavailable',
]);

// The message of each kind, from its numbers (the core's `Display` wording).
export const MESSAGES = {
  HeaderTooSmall: ([len]) => `file of ${len} bytes is shorter than the 8-byte length prefix`,
  HeaderTooLarge: ([n, limit]) => `header length ${n} is over the limit of ${limit} bytes`,
  InvalidHeaderLength: ([n, len]) => `header length ${n} does not fit in a file of ${len} bytes`,
  InvalidUtf8: () => 'header is not valid UTF-8',
  UnexpectedEnd: ([e]) => `header ends where ${EXPECTED[e]} was expected`,
  UnexpectedByte: ([b, e]) => `unexpected byte 0x${b.toString(16).padStart(2, '0')} where ${EXPECTED[e]} was expected`,
  InvalidEscape: () => 'invalid escape in string',
  LoneSurrogate: () => '\\u escape of a lone surrogate',
  ControlCharacterInString: () => 'raw control character in string',
  InvalidNumber: () => 'invalid or out-of-range number',
  NestingTooDeep: () => 'arrays and objects nested too deep (limit 128)',
  MetadataNotObject: () => '__metadata__ is not an object or null',
  MetadataValueNotString: () => '__metadata__ value is not a string',
  DuplicateMetadata: () => '__metadata__ appears twice',
  DuplicateMetadataKey: () => 'metadata key appears twice',
  TensorNotObject: () => 'tensor entry is not an object',
  DtypeNotString: () => 'dtype is not a string',
  UnknownDtype: () => 'unknown dtype',
  MissingField: ([f]) => `missing field "${FIELD[f]}"`,
  DuplicateField: ([f]) => `field "${FIELD[f]}" appears twice`,
  DataOffsetsNotPair: ([n]) => `data_offsets holds ${n}${n >= 3 ? ' or more' : ''} integers, not 2`,
  IntegerTooLarge: () => 'integer larger than 2^64-1',
  DuplicateTensorName: () => 'tensor name appears twice',
  CapacityExceeded: ([cap, need]) => `table of ${cap} slots is too small: this header needs ${need}`,
  InvalidOffset: ([at, begin, end]) => `data_offsets [${begin}, ${end}] do not continue at ${at}`,
  ValidationOverflow: () => 'element or bit count overflows 64 bits',
  MisalignedSlice: ([n]) => `${n} sub-byte elements are not a whole number of bytes`,
  TensorInvalidInfo: ([want, found]) => `data_offsets span ${found} bytes but shape and dtype need ${want}`,
  MetadataIncompleteBuffer: ([want, found]) => `byte buffer is ${found} bytes but the header describes ${want}`,
  DtypeMismatch: ([d]) => `tensor has dtype ${DTYPES[d]}, not the one asked for`,
  LengthMismatch: ([want, found]) => `buffer of ${found} elements where ${want} are needed`,
  BufferTooSmall: ([need, have]) => `output buffer of ${have} bytes is too small: ${need} needed`,
  ReservedName: () => 'a tensor may not be named __metadata__',
  DataLengthMismatch: ([want, found]) => `tensor data is ${found} bytes but shape and dtype need ${want}`,
  // This layer's (wasm/src):
  OffsetTooLarge: ([end]) => `tensor ends at file byte ${end}, above 2^53 where JS numbers stop being exact`,
  DimensionTooLarge: ([d]) => `dimension ${d} is above 2^53, where JS numbers stop being exact`,
  InvalidArgument: () => 'malformed write plan',
};
