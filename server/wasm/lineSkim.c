/*
 * The line skim of `server/src/store/log/lineSkim.ts`, compiled to WebAssembly with 128-bit SIMD.
 *
 * It reads what the index needs of the lines that make up most of a dsh log (chunk events, packed
 * chunk rows, bookkeeping events, the turn, step and tool-call events the closers track, plain
 * appended messages, tool results) straight from their bytes,
 * after checking that the bytes are JSON that `JSON.parse` accepts and that every check dsh makes
 * of the kind passes. Whenever anything is unusual the answer is "parse it" (0), and the full fold
 * decides: the skim is sound, not complete. lineSkim.ts (its JavaScript side) documents the rules
 * and the results, and `lineSkim.test.ts` proves with fast-check that every line skimmed is what
 * `JSON.parse` and dsh's checks make of it, and that summaries with and without the skim are
 * identical.
 *
 * Build: `node server/wasm/build.mjs` (clang 14 and wasm-ld 14, Debian's clang-14 and lld-14). It
 * writes `lineSkimWasm.ts`, the module as base64; `lineSkimWasm.test.ts` rebuilds it and compares.
 *
 * Memory: the line is written at `line_buffer(length)`, which keeps 16 bytes of slack after it.
 * Results are read from `results()` (see `struct results`), `calls()` and `run_results()`
 * (`struct run`).
 */
#include <stdint.h>
#include <wasm_simd128.h>

#define EXPORT(name) __attribute__((export_name(#name)))

enum { PARSE = 0, PLAIN = 1, TEXT_ROW = 2, TOOL_ROW = 3, ASSISTANT = 4, USER = 5, TOOL_RESULT = 6, TURN_START = 7, TURN_END = 8, STEP_START = 9, STEP_END = 10, TOOL_CALL = 11, TOOL_FOLDED = 12 };

#define QUOTE 0x22
#define BACKSLASH 0x5c
#define COLON 0x3a
#define COMMA 0x2c
#define OPEN_BRACE 0x7b
#define CLOSE_BRACE 0x7d
#define OPEN_BRACKET 0x5b
#define CLOSE_BRACKET 0x5d
#define MINUS 0x2d
#define ZERO 0x30
#define NINE 0x39
#define MAX_DEPTH 64
#define MAX_SAFE_DIGITS 15
#define MAX_SAFE_INTEGER 9007199254740991LL
#define MAX_CALLS 1024
#define MAX_TYPES 128
#define MAX_TYPE_LENGTH 64
#define PAGE 65536u

extern unsigned char __heap_base;

/* What the skim found (read by lineSkim.ts). */
struct results {
  double seq;
  double time;
  double count;
  double last_time;
  int32_t content_start;
  int32_t content_end;
  int32_t step_start;
  int32_t step_end;
  int32_t call_count;
};
static struct results R;
static int32_t CALL_IDS[2 * MAX_CALLS];

/* Known type names (TYPES, their bytes in TYPE_TEXT) and what each makes of a line. */
static char TYPE_TEXT[MAX_TYPES][MAX_TYPE_LENGTH];
static struct name {
  const char *text;
  uint32_t length;
} TYPES[MAX_TYPES];
static int32_t TYPE_CODES[MAX_TYPES];
static int TYPE_COUNT;

/* The line being skimmed. */
static const uint8_t *B;
static uint32_t P;
static uint32_t E;
/* Where the last plain key or string read began (after its quote) and ended (at its closing quote). */
static uint32_t S0;
static uint32_t S1;
static int ESCAPED;

static inline int is_digit(uint32_t c) { return c >= ZERO && c <= NINE; }
static inline int is_hex(uint32_t c) { return is_digit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46); }
static inline int is_space(uint32_t c) { return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09; }

static inline void space(void) {
  while (P < E && is_space(B[P])) P++;
}

static inline int take(uint8_t byte) {
  if (P < E && B[P] == byte) {
    P++;
    return 1;
  }
  space();
  if (P < E && B[P] == byte) {
    P++;
    return 1;
  }
  return 0;
}

static inline int peek(void) {
  if (P >= E) return -1;
  uint8_t c = B[P];
  if (!is_space(c)) return c;
  space();
  return P < E ? B[P] : -1;
}

/* Which of the 16 bytes at `at` stop a string's text (a quote, a backslash or a control byte), one bit each. */
static inline uint32_t stop_mask(const uint8_t *at) {
  v128_t v = wasm_v128_load(at);
  v128_t hit = wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(v, wasm_i8x16_splat(QUOTE)), wasm_i8x16_eq(v, wasm_i8x16_splat(BACKSLASH))), wasm_u8x16_lt(v, wasm_i8x16_splat(0x20)));
  return wasm_i8x16_bitmask(hit);
}

/* The first byte at or after `p` (before `e`) that is a quote, a backslash or a control byte; `e` if none. */
static inline uint32_t string_stop(const uint8_t *b, uint32_t p, uint32_t e) {
  while (p + 16 <= e) {
    uint32_t mask = stop_mask(b + p);
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
  while (p < e) {
    uint8_t c = b[p];
    if (c == QUOTE || c == BACKSLASH || c < 0x20) return p;
    p++;
  }
  return e;
}

/* The escape at `p` (its backslash) is one JSON allows: where the next character begins, or 0. */
static inline uint32_t escape_end(const uint8_t *b, uint32_t p, uint32_t e) {
  if (p + 1 >= e) return 0;
  uint8_t x = b[p + 1];
  if (x == 0x75) return p + 6 <= e && is_hex(b[p + 2]) && is_hex(b[p + 3]) && is_hex(b[p + 4]) && is_hex(b[p + 5]) ? p + 6 : 0;
  return x == QUOTE || x == BACKSLASH || x == 0x2f || x == 0x62 || x == 0x66 || x == 0x6e || x == 0x72 || x == 0x74 ? p + 2 : 0;
}

/*
 * A JSON string at P (its opening quote). Sets S0, S1 and ESCAPED. 16 bytes a step: the stops
 * (quote, backslash, control byte) of a step are taken from its mask one after another, an escape
 * clearing the bits of the characters it covers, so text with many escapes is not loaded again
 * after each one.
 */
static int string(void) {
  const uint8_t *b = B;
  uint32_t e = E;
  uint32_t p = P + 1;
  uint32_t start = p;
  int escaped = 0;
  for (;;) {
    if (p + 16 > e) {
      /* The last bytes of the line, one at a time. */
      while (p < e && b[p] != QUOTE) {
        if (b[p] < 0x20) return 0;
        if (b[p] == BACKSLASH) {
          escaped = 1;
          p = escape_end(b, p, e);
          if (p == 0) return 0;
        } else {
          p++;
        }
      }
      if (p >= e) return 0;
      break;
    }
    uint32_t mask = stop_mask(b + p);
    uint32_t next = p + 16;
    while (mask != 0) {
      uint32_t at = p + (uint32_t)__builtin_ctz(mask);
      uint8_t c = b[at];
      if (c == QUOTE) {
        S0 = start;
        S1 = at;
        ESCAPED = escaped;
        P = at + 1;
        return 1;
      }
      if (c < 0x20) return 0;
      escaped = 1;
      uint32_t after = escape_end(b, at, e);
      if (after == 0) return 0;
      if (after >= p + 16) {
        next = after;
        break;
      }
      mask &= ~0u << (after - p);
    }
    p = next;
  }
  S0 = start;
  S1 = p;
  ESCAPED = escaped;
  P = p + 1;
  return 1;
}

static int plain_string(void) { return peek() == QUOTE && string() && !ESCAPED; }

/* The `length` bytes at `bytes` are those of `text`. */
static inline int same_bytes(const uint8_t *bytes, const char *text, uint32_t length) {
  for (uint32_t k = 0; k < length; k++)
    if (bytes[k] != (uint8_t)text[k]) return 0;
  return 1;
}

/* The index in `names` of the `length` bytes at `bytes`; -1 when they are none of them. */
static int find_name(const uint8_t *bytes, uint32_t length, const struct name *names, int count) {
  for (int i = 0; i < count; i++)
    if (names[i].length == length && same_bytes(bytes, names[i].text, length)) return i;
  return -1;
}
#define NAME(literal) {literal, sizeof(literal) - 1}

/* The last string read equals `name` byte for byte. */
static int last_is(const char *name, uint32_t length) { return S1 - S0 == length && same_bytes(B + S0, name, length); }
#define LAST_IS(literal) last_is(literal, sizeof(literal) - 1)

/* An object key and its colon: its index in `names`, -1 for any other plain key, -2 when unreadable or escaped. */
static int key(const struct name *names, int count) {
  if (peek() != QUOTE) return -2;
  const uint8_t *b = B;
  uint32_t e = E;
  uint32_t start = P + 1;
  uint32_t p = start;
  while (p < e) {
    uint8_t c = b[p];
    if (c == QUOTE) break;
    if (c == BACKSLASH || c < 0x20) return -2;
    p++;
  }
  if (p >= e) return -2;
  P = p + 1;
  if (!take(COLON)) return -2;
  return find_name(b + start, p - start, names, count);
}

/* A JSON number, any form. */
static int number(void) {
  const uint8_t *b = B;
  uint32_t e = E;
  uint32_t p = P;
  if (b[p] == MINUS) p++;
  if (p >= e || !is_digit(b[p])) return 0;
  if (b[p] == ZERO)
    p++;
  else
    while (p < e && is_digit(b[p])) p++;
  if (p < e && b[p] == 0x2e) {
    p++;
    if (p >= e || !is_digit(b[p])) return 0;
    while (p < e && is_digit(b[p])) p++;
  }
  if (p < e && (b[p] == 0x65 || b[p] == 0x45)) {
    p++;
    if (p < e && (b[p] == 0x2b || b[p] == MINUS)) p++;
    if (p >= e || !is_digit(b[p])) return 0;
    while (p < e && is_digit(b[p])) p++;
  }
  P = p;
  return 1;
}

/*
 * The integer at `p` (before `e`) written as plain digits, optionally negative, never `-0`, no
 * leading zero, at most MAX_SAFE_DIGITS digits: its value in *out and where it ends in *end;
 * 0 for anything else. What follows the digits is the caller's to check.
 */
static inline int safe_digits(const uint8_t *b, uint32_t p, uint32_t e, int64_t *out, uint32_t *end) {
  int negative = p < e && b[p] == MINUS;
  if (negative) p++;
  uint32_t first = p;
  int64_t value = 0;
  while (p < e) {
    uint8_t c = b[p];
    if (c < ZERO || c > NINE) break;
    /* Past MAX_SAFE_DIGITS the answer is no: stop adding before the value could overflow. */
    if (p - first < 18) value = value * 10 + (c - ZERO);
    p++;
  }
  uint32_t digits = p - first;
  if (digits == 0 || digits > MAX_SAFE_DIGITS || (digits > 1 && b[first] == ZERO) || (negative && value == 0)) return 0;
  *out = negative ? -value : value;
  *end = p;
  return 1;
}

/* An integer (see safe_digits) after optional white space, not followed by a fraction or exponent; 0 (and *out unset) for anything else. */
static int integer(int64_t *out) {
  space();
  uint32_t end;
  if (!safe_digits(B, P, E, out, &end)) return 0;
  if (end < E && (B[end] == 0x2e || B[end] == 0x65 || B[end] == 0x45)) return 0;
  P = end;
  return 1;
}

static int word(const char *literal, uint32_t length) {
  if (P + length > E || !same_bytes(B + P, literal, length)) return 0;
  P += length;
  return 1;
}
#define WORD(literal) word(literal, sizeof(literal) - 1)

/* Where value() takes an array already read as valid for the array's end (SKIP_TO): none unless set. */
static uint32_t SKIP_FROM = 0xffffffffu;
static uint32_t SKIP_TO;

/* Any JSON value. */
static int value(int depth) {
  int c = peek();
  if (c == QUOTE) return string();
  if (c == OPEN_BRACE) {
    if (depth >= MAX_DEPTH) return 0;
    P++;
    if (take(CLOSE_BRACE)) return 1;
    do {
      if (peek() != QUOTE || !string() || !take(COLON) || !value(depth + 1)) return 0;
    } while (take(COMMA));
    return take(CLOSE_BRACE);
  }
  if (c == OPEN_BRACKET) {
    if (P == SKIP_FROM) {
      P = SKIP_TO;
      return 1;
    }
    if (depth >= MAX_DEPTH) return 0;
    P++;
    if (take(CLOSE_BRACKET)) return 1;
    do {
      if (!value(depth + 1)) return 0;
    } while (take(COMMA));
    return take(CLOSE_BRACKET);
  }
  if (c == MINUS || (c >= 0 && is_digit((uint32_t)c))) return number();
  return WORD("true") || WORD("false") || WORD("null");
}

/* The compact form of a non-empty array of strings with no escape or control byte: its length, or 0 (P unmoved). */
static uint32_t compact_string_array(void) {
  const uint8_t *b = B;
  uint32_t e = E;
  uint32_t p = P;
  if (p >= e || b[p] != OPEN_BRACKET) return 0;
  p++;
  uint32_t count = 0;
  for (;;) {
    if (p >= e || b[p] != QUOTE) return 0;
    p = string_stop(b, p + 1, e);
    if (p >= e || b[p] != QUOTE) return 0;
    p++;
    count++;
    if (p >= e) return 0;
    uint8_t c = b[p++];
    if (c == COMMA) continue;
    if (c != CLOSE_BRACKET) return 0;
    P = p;
    return count;
  }
}

/* A non-empty array of strings: its length, or 0. */
static uint32_t string_array(void) {
  space();
  uint32_t compact = compact_string_array();
  if (compact > 0) return compact;
  if (!take(OPEN_BRACKET)) return 0;
  uint32_t count = 0;
  do {
    if (peek() != QUOTE || !string()) return 0;
    count++;
  } while (take(COMMA));
  return take(CLOSE_BRACKET) ? count : 0;
}

static uint32_t GAP_COUNT;
static int64_t GAP_SUM;

/*
 * The compact form of an array of integers at P: sets GAP_COUNT and GAP_SUM (from `start`; with
 * `ascending`, the last element, the elements non-negative and strictly ascending); 0 (P unmoved)
 * for anything else.
 */
static int compact_integers(int64_t start, int ascending) {
  const uint8_t *b = B;
  uint32_t e = E;
  uint32_t p = P;
  if (p >= e || b[p] != OPEN_BRACKET) return 0;
  p++;
  uint32_t count = 0;
  int64_t sum = start;
  int64_t last = -1;
  if (p < e && b[p] == CLOSE_BRACKET) {
    P = p + 1;
    GAP_COUNT = 0;
    GAP_SUM = ascending ? -1 : sum;
    return 1;
  }
  for (;;) {
    int64_t value;
    if (!safe_digits(b, p, e, &value, &p) || p >= e) return 0;
    count++;
    if (ascending) {
      if (!(value > last)) return 0;
      last = value;
    } else {
      sum += value;
      if (sum > MAX_SAFE_INTEGER || sum < -MAX_SAFE_INTEGER) return 0;
    }
    uint8_t c = b[p++];
    if (c == COMMA) continue;
    if (c != CLOSE_BRACKET) return 0;
    P = p;
    GAP_COUNT = count;
    GAP_SUM = ascending ? last : sum;
    return 1;
  }
}

/* Lanes 0..n-1 set, for n in 0..16: 16 bytes at LANES + 16 - n. */
static const uint8_t LANES[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Where the 16 bytes at `b` are ASCII digits, as lanes of 0xff. */
static inline v128_t digit_lanes(const uint8_t *b) { return wasm_u8x16_lt(wasm_i8x16_sub(wasm_v128_load(b), wasm_i8x16_splat(ZERO)), wasm_i8x16_splat(10)); }

/*
 * compact_integers(start, 0) for the arrays packed rows' `dt` nearly always are: compact, every
 * element of one or two digits, no leading zero. Reads 16 bytes a step; a byte's lane looks at its
 * neighbours through the loads at -1, +1 and +2, so a number split between two steps needs no
 * carry: a digit followed by a digit is a tens digit, one followed by anything else ends a number.
 * 0 (P unmoved) for anything else, and where the array does not end 18 bytes before the line does.
 */
static int small_integers(int64_t start) {
  const uint8_t *b = B;
  uint32_t e = E;
  uint32_t p = P;
  if (p + 2 > e || b[p] != OPEN_BRACKET || !is_digit(b[p + 1])) return 0;
  p++;
  uint32_t count = 0;
  int64_t sum = start;
  const v128_t zero = wasm_i8x16_splat(ZERO);
  while (p + 18 <= e) {
    v128_t v = wasm_v128_load(b + p);
    v128_t digits = digit_lanes(b + p);
    uint32_t d = wasm_i8x16_bitmask(digits);
    uint32_t c = wasm_i8x16_bitmask(wasm_i8x16_eq(v, wasm_i8x16_splat(COMMA)));
    v128_t next_digits = digit_lanes(b + p + 1);
    uint32_t next = wasm_i8x16_bitmask(next_digits);
    uint32_t after_next = wasm_i8x16_bitmask(digit_lanes(b + p + 2));
    uint32_t before = wasm_i8x16_bitmask(digit_lanes(b + p - 1));
    uint32_t other = ~(d | c) & 0xffff;
    uint32_t n = other == 0 ? 16 : (uint32_t)__builtin_ctz(other);
    uint32_t keep = (1u << n) - 1;
    d &= keep;
    c &= keep;
    /*
     * Three digits in a row, a zero starting a longer number, a comma after no digit. (A comma
     * before no digit is before a comma, caught there, or before the end, caught below.)
     */
    uint32_t bad = (d & next & after_next) | (wasm_i8x16_bitmask(wasm_i8x16_eq(v, zero)) & keep & ~before & next) | (c & ~before);
    if (bad != 0) return 0;
    v128_t values = wasm_v128_and(wasm_v128_and(wasm_i8x16_sub(v, zero), digits), wasm_v128_load(LANES + 16 - n));
    /* A tens digit counts ten times: its value added nine more times. */
    values = wasm_i8x16_add(values, wasm_v128_and(wasm_i8x16_add(wasm_i8x16_shl(values, 3), values), next_digits));
    v128_t pairs = wasm_u32x4_extadd_pairwise_u16x8(wasm_u16x8_extadd_pairwise_u8x16(values));
    sum += (int64_t)wasm_i32x4_extract_lane(pairs, 0) + wasm_i32x4_extract_lane(pairs, 1) + wasm_i32x4_extract_lane(pairs, 2) + wasm_i32x4_extract_lane(pairs, 3);
    count += (uint32_t)__builtin_popcount(d & ~next);
    if (n < 16) {
      /* The array ends at the first byte that is neither a digit nor a comma, after a digit. */
      if (b[p + n] != CLOSE_BRACKET || !is_digit(b[p + n - 1])) return 0;
      if (sum > MAX_SAFE_INTEGER) return 0;
      P = p + n + 1;
      GAP_COUNT = count;
      GAP_SUM = sum;
      return 1;
    }
    p += 16;
  }
  return 0;
}

/* An array of safe integers added up from `start`; 0 when it is not one or a sum leaves the safe range. */
static int gaps(int64_t start) {
  space();
  if (small_integers(start) || compact_integers(start, 0)) return 1;
  if (!take(OPEN_BRACKET)) return 0;
  uint32_t count = 0;
  int64_t sum = start;
  if (!take(CLOSE_BRACKET)) {
    do {
      int64_t gap;
      if (!integer(&gap)) return 0;
      sum += gap;
      if (sum > MAX_SAFE_INTEGER || sum < -MAX_SAFE_INTEGER) return 0;
      count++;
    } while (take(COMMA));
    if (!take(CLOSE_BRACKET)) return 0;
  }
  GAP_COUNT = count;
  GAP_SUM = sum;
  return 1;
}

/* Keys of a log line the skim knows, by index (a bit each in a seen-mask). */
static const struct name LINE_KEYS[] = {NAME("type"), NAME("seq"), NAME("time"), NAME("data"), NAME("ignorable"), NAME("seq0"), NAME("time0"), NAME("surfaceOp"), NAME("sourceEventSeqs")};
enum { K_TYPE, K_SEQ, K_TIME, K_DATA, K_IGNORABLE, K_SEQ0, K_TIME0, K_SURFACE_OP, K_SOURCES };
static const struct name ROW_DATA_KEYS[] = {NAME("turn"), NAME("step"), NAME("index"), NAME("dt"), NAME("texts"), NAME("args"), NAME("id"), NAME("name")};
enum { ROW_INDEX = 2, ROW_DT = 3, ROW_TEXTS = 4, ROW_ARGS = 5, ROW_ID = 6, ROW_NAME = 7 };
#define BIT(index) (1u << (index))
#define TEXT_ROW_REQUIRED (BIT(0) | BIT(1) | BIT(ROW_INDEX) | BIT(ROW_DT) | BIT(ROW_TEXTS))
#define TOOL_ROW_REQUIRED (BIT(0) | BIT(1) | BIT(ROW_INDEX) | BIT(ROW_ID) | BIT(ROW_DT) | BIT(ROW_ARGS))
#define ROW_LINE_KEYS (BIT(K_TYPE) | BIT(K_SEQ0) | BIT(K_TIME0) | BIT(K_DATA))
#define EVENT_LINE_REQUIRED (BIT(K_TYPE) | BIT(K_SEQ) | BIT(K_TIME) | BIT(K_DATA))
#define EVENT_LINE_REFUSED (BIT(K_SEQ0) | BIT(K_TIME0) | BIT(K_SURFACE_OP) | BIT(K_SOURCES))
#define ROW_ONLY (BIT(K_SEQ0) | BIT(K_TIME0))
#define COUNT(names) ((int)(sizeof(names) / sizeof((names)[0])))

static uint32_t ROW_COUNT;
static int64_t ROW_LAST_TIME;

/* A packed row's data exactly as dsh writes it; sets ROW_COUNT and ROW_LAST_TIME. */
static int row_data(int tool_call, int64_t time0) {
  if (!take(OPEN_BRACE)) return 0;
  uint32_t seen = 0;
  uint32_t members = 0;
  int64_t gap_count = -1;
  int64_t last_time = 0;
  do {
    int k = key(ROW_DATA_KEYS, COUNT(ROW_DATA_KEYS));
    if (k < 0 || (seen & BIT(k)) != 0) return 0;
    seen |= BIT(k);
    int c = peek();
    if (k <= ROW_INDEX) {
      if (!(c == MINUS || (c >= 0 && is_digit((uint32_t)c))) || !number()) return 0;
    } else if (k == (tool_call ? ROW_ARGS : ROW_TEXTS)) {
      members = string_array();
      if (members == 0) return 0;
    } else if (k == ROW_DT) {
      if (!gaps(time0)) return 0;
      gap_count = GAP_COUNT;
      last_time = GAP_SUM;
    } else if (tool_call && (k == ROW_ID || k == ROW_NAME)) {
      if (c != QUOTE || !string()) return 0;
    } else {
      return 0;
    }
  } while (take(COMMA));
  if (!take(CLOSE_BRACE)) return 0;
  uint32_t required = tool_call ? TOOL_ROW_REQUIRED : TEXT_ROW_REQUIRED;
  if ((seen & required) != required || gap_count != (int64_t)members - 1) return 0;
  ROW_COUNT = members;
  ROW_LAST_TIME = last_time;
  return 1;
}

static const struct name MESSAGE_KEYS[] = {NAME("id"), NAME("role"), NAME("source"), NAME("content")};
enum { M_ID, M_ROLE, M_SOURCE, M_CONTENT };
#define MESSAGE_REQUIRED (BIT(M_ID) | BIT(M_ROLE) | BIT(M_SOURCE) | BIT(M_CONTENT))
static const struct name ASSISTANT_DATA_KEYS[] = {NAME("message"), NAME("step")};
static const struct name SOURCE_KEYS[] = {NAME("kind"), NAME("provider"), NAME("model")};
static const struct name BLOCK_KEYS[] = {NAME("type"), NAME("id")};

static int non_empty_string(void) { return peek() == QUOTE && string() && S1 > S0; }

/* A message's source: a non-empty string kind; for the assistant kind `model` and a non-empty provider and model. */
static int source(int assistant) {
  if (!take(OPEN_BRACE)) return 0;
  uint32_t seen = 0;
  if (!take(CLOSE_BRACE)) {
    do {
      int k = key(SOURCE_KEYS, COUNT(SOURCE_KEYS));
      if (k == -2) return 0;
      if (k < 0) {
        if (!value(3)) return 0;
        continue;
      }
      if ((seen & BIT(k)) != 0) return 0;
      seen |= BIT(k);
      if (k == 0) {
        if (!non_empty_string()) return 0;
        if (assistant && (ESCAPED || !LAST_IS("model"))) return 0;
      } else if (assistant) {
        if (!non_empty_string()) return 0;
      } else if (!value(3)) {
        return 0;
      }
    } while (take(COMMA));
    if (!take(CLOSE_BRACE)) return 0;
  }
  return (seen & 1) != 0 && (!assistant || seen == 7);
}

/* An assistant message's content: an array of objects; each tool-call block's id range goes to CALL_IDS. */
static int assistant_content(void) {
  if (!take(OPEN_BRACKET)) return 0;
  if (take(CLOSE_BRACKET)) return 1;
  do {
    if (!take(OPEN_BRACE)) return 0;
    uint32_t seen = 0;
    int tool_call = 0;
    int32_t id_start = -1;
    int32_t id_end = -1;
    if (!take(CLOSE_BRACE)) {
      do {
        int k = key(BLOCK_KEYS, COUNT(BLOCK_KEYS));
        if (k == -2) return 0;
        if (k >= 0) {
          if ((seen & BIT(k)) != 0) return 0;
          seen |= BIT(k);
        }
        space();
        uint32_t start = P;
        if (!value(5)) return 0;
        if (k == 0) {
          if (B[start] == QUOTE) {
            if (ESCAPED) return 0;
            tool_call = LAST_IS("tool-call");
          }
        } else if (k == 1) {
          id_start = (int32_t)start;
          id_end = (int32_t)P;
        }
      } while (take(COMMA));
      if (!take(CLOSE_BRACE)) return 0;
    }
    if (tool_call) {
      if (R.call_count >= MAX_CALLS) return 0;
      CALL_IDS[2 * R.call_count] = id_start;
      CALL_IDS[2 * R.call_count + 1] = id_end;
      R.call_count++;
    }
  } while (take(COMMA));
  return take(CLOSE_BRACKET);
}

/* A surface message object (a user/message's data, an assistant/message's data.message). */
static int message(int assistant) {
  if (!take(OPEN_BRACE)) return 0;
  uint32_t seen = 0;
  if (take(CLOSE_BRACE)) return 0;
  do {
    int k = key(MESSAGE_KEYS, COUNT(MESSAGE_KEYS));
    if (k == -2) return 0;
    if (k < 0) {
      if (!value(3)) return 0;
      continue;
    }
    if ((seen & BIT(k)) != 0) return 0;
    seen |= BIT(k);
    switch (k) {
      case M_ID:
        if (!non_empty_string()) return 0;
        break;
      case M_ROLE:
        if (!plain_string() || !(assistant ? LAST_IS("assistant") : LAST_IS("user"))) return 0;
        break;
      case M_SOURCE:
        if (!source(assistant)) return 0;
        break;
      default:
        if (assistant) {
          if (!assistant_content()) return 0;
        } else if (peek() != OPEN_BRACKET || !value(2)) {
          return 0;
        }
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE) && seen == MESSAGE_REQUIRED;
}

/* An assistant/message's data: an object with a valid message; the range of `step` goes to R. */
static int assistant_data(void) {
  if (!take(OPEN_BRACE)) return 0;
  uint32_t seen = 0;
  if (take(CLOSE_BRACE)) return 0;
  do {
    int k = key(ASSISTANT_DATA_KEYS, COUNT(ASSISTANT_DATA_KEYS));
    if (k == -2) return 0;
    if (k >= 0) {
      if ((seen & BIT(k)) != 0) return 0;
      seen |= BIT(k);
    }
    if (k == 0) {
      if (!message(1)) return 0;
    } else {
      space();
      uint32_t start = P;
      if (!value(2)) return 0;
      if (k == 1) {
        R.step_start = (int32_t)start;
        R.step_end = (int32_t)P;
      }
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE) && (seen & 1) != 0;
}

static const struct name DATA_MESSAGE_KEYS[] = {NAME("message")};
static const struct name CONTENT_KEYS[] = {NAME("content")};

/* An object whose key `names[0]` occurs exactly once and holds what `inner` accepts; other values only validated. */
static int object_with(const struct name *names, int depth, int (*inner)(void)) {
  if (!take(OPEN_BRACE)) return 0;
  if (take(CLOSE_BRACE)) return 0;
  int found = 0;
  do {
    int k = key(names, 1);
    if (k == -2) return 0;
    if (k == 0) {
      if (found || !inner()) return 0;
      found = 1;
    } else if (!value(depth + 1)) {
      return 0;
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE) && found;
}

/* The tool's output: an array, recorded in R.content_start and R.content_end. */
static int tool_output(void) {
  if (peek() != OPEN_BRACKET) return 0;
  uint32_t start = P;
  if (!value(4)) return 0;
  R.content_start = (int32_t)start;
  R.content_end = (int32_t)P;
  return 1;
}

/* data.message.content: an array whose first element is an object with a `content` array. */
static int tool_result_content(void) {
  if (!take(OPEN_BRACKET)) return 0;
  if (peek() != OPEN_BRACE || !object_with(CONTENT_KEYS, 3, tool_output)) return 0;
  while (take(COMMA))
    if (!value(3)) return 0;
  return take(CLOSE_BRACKET);
}

static int tool_result_message(void) { return peek() == OPEN_BRACE && object_with(CONTENT_KEYS, 1, tool_result_content); }

/* A tool/result's data, down to its first block's content. */
static int tool_result_data(void) {
  R.content_start = -1;
  return object_with(DATA_MESSAGE_KEYS, 0, tool_result_message);
}

/* Keys of a tracked event's data (turn/start, turn/end, step/start, tool/call) that the skim looks at. */
static const struct name TRACKED_DATA_KEYS[] = {NAME("turn"), NAME("step"), NAME("callId"), NAME("trigger"), NAME("reason")};
enum { T_TURN, T_STEP, T_CALL_ID, T_TRIGGER, T_REASON };

/*
 * The data of a turn/start, step/start or tool/call: an object (the closers' tracking reads a key
 * of it), each of TRACKED_DATA_KEYS at most once, the range of the `wanted` one's value going to
 * R.step_start and R.step_end (-1 when absent); with `legacy_trigger`, no `trigger` key (a
 * turn/start with one has a legacy form).
 */
static int tracked_data(int wanted, int legacy_trigger) {
  if (!take(OPEN_BRACE)) return 0;
  if (take(CLOSE_BRACE)) return 1;
  uint32_t seen = 0;
  do {
    int k = key(TRACKED_DATA_KEYS, COUNT(TRACKED_DATA_KEYS));
    if (k == -2) return 0;
    if (k >= 0) {
      if ((seen & BIT(k)) != 0) return 0;
      seen |= BIT(k);
    }
    if (k == T_TRIGGER && legacy_trigger) return 0;
    space();
    uint32_t start = P;
    if (!value(2)) return 0;
    if (k == wanted) {
      R.step_start = (int32_t)start;
      R.step_end = (int32_t)P;
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE);
}

static const struct name REASON_KEYS[] = {NAME("kind")};
static const struct name PLAIN_REASONS[] = {NAME("completed"), NAME("blocked"), NAME("max-tokens"), NAME("interrupted")};

/* A turn/end's reason that no legacy upgrade changes: {"kind": one of PLAIN_REASONS}, nothing else. */
static int plain_reason(void) {
  if (!take(OPEN_BRACE)) return 0;
  if (key(REASON_KEYS, COUNT(REASON_KEYS)) != 0) return 0;
  if (!plain_string() || find_name(B + S0, S1 - S0, PLAIN_REASONS, COUNT(PLAIN_REASONS)) < 0) return 0;
  return take(CLOSE_BRACE);
}

/*
 * A turn/end's data as dsh writes it now, which its load checks and leaves as it is: exactly
 * `turn` (an integer of at least 1) and a plain `reason`, once each. Any other form (a legacy one,
 * another reason) is parsed.
 */
static int turn_end_data(void) {
  if (!take(OPEN_BRACE)) return 0;
  uint32_t seen = 0;
  do {
    int k = key(TRACKED_DATA_KEYS, COUNT(TRACKED_DATA_KEYS));
    if ((k != T_TURN && k != T_REASON) || (seen & BIT(k)) != 0) return 0;
    seen |= BIT(k);
    if (k == T_TURN) {
      int64_t turn;
      if (!integer(&turn) || turn < 1) return 0;
    } else if (!plain_reason()) {
      return 0;
    }
  } while (take(COMMA));
  return take(CLOSE_BRACE) && seen == (BIT(T_TURN) | BIT(T_REASON));
}

static int64_t LAST_SOURCE;

/*
 * compact_integers(0, 1) for the sourceEventSeqs dsh writes: mostly runs of consecutive seqs, often
 * hundreds. The decimal text of the last element plus one is kept as an odometer, and an element
 * equal to it byte for byte (then a byte that is no digit) is taken without reading its digits;
 * any other element is read as compact_integers reads it. 0 (P unmoved) for anything else.
 */
static int consecutive_integers(void) {
  const uint8_t *b = B;
  uint32_t e = E;
  uint32_t p = P;
  if (p + 2 > e || b[p] != OPEN_BRACKET || !is_digit(b[p + 1])) return 0;
  p++;
  /* The odometer, NUL-padded so that 8 bytes of it can be compared at once. */
  uint8_t text[24] = {0};
  uint32_t length = 0;
  int64_t last = -1;
  uint32_t count = 0;
  for (;;) {
    uint32_t end = 0;
    int same = 0;
    if (length > 0 && p + length < e) {
      uint64_t x;
      uint64_t y;
      __builtin_memcpy(&x, b + p, 8);
      __builtin_memcpy(&y, text, 8);
      uint64_t mask = length >= 8 ? ~0ull : (1ull << (8 * length)) - 1;
      same = ((x ^ y) & mask) == 0 && (length <= 8 || same_bytes(b + p + 8, (const char *)text + 8, length - 8)) && !is_digit(b[p + length]);
    }
    if (same) {
      last++;
      end = p + length;
    } else {
      int64_t value;
      if (!safe_digits(b, p, e, &value, &end) || end >= e || !(value > last)) return 0;
      last = value;
      /* A value above last >= -1 has no sign: its digits are its decimal text. */
      length = end - p;
      for (uint32_t k = 0; k < length; k++) text[k] = b[p + k];
    }
    count++;
    /* The odometer moves on to last + 1; past MAX_SAFE_DIGITS it stops matching. */
    int k = (int)length - 1;
    while (k >= 0 && text[k] == NINE) text[k--] = ZERO;
    if (k >= 0) {
      text[k]++;
    } else if (length < MAX_SAFE_DIGITS) {
      text[length++] = ZERO;
      text[0] = ZERO + 1;
    } else {
      length = 0;
    }
    uint8_t c = b[end];
    if (c == COMMA) {
      p = end + 1;
      continue;
    }
    if (c != CLOSE_BRACKET) return 0;
    P = end + 1;
    GAP_COUNT = count;
    GAP_SUM = last;
    return 1;
  }
}

/* sourceEventSeqs: non-empty (unless `empty_allowed`), strictly ascending non-negative safe integers. */
static int sources(int empty_allowed) {
  space();
  if (consecutive_integers() || compact_integers(0, 1)) {
    LAST_SOURCE = GAP_SUM;
    return empty_allowed || GAP_COUNT > 0;
  }
  if (!take(OPEN_BRACKET)) return 0;
  int64_t last = -1;
  if (take(CLOSE_BRACKET)) {
    LAST_SOURCE = -1;
    return empty_allowed;
  }
  do {
    int64_t seq;
    if (!integer(&seq) || !(seq > last)) return 0;
    last = seq;
  } while (take(COMMA));
  LAST_SOURCE = last;
  return take(CLOSE_BRACKET);
}

/*
 * A tool/result the skim folds itself (TOOL_FOLDED), as the fold would after parsing it: a valid
 * appended result whose data is plain enough to write its rewrite key here. The key is what
 * surfaceFold.ts's rewriteKey makes of the data: the SHA-256 (base64) of its canonical JSON (keys
 * sorted at every level) with the message's content replaced by its first block, that block's
 * content by null. Canonical here means the bytes of the line are already what JSON.stringify
 * writes, so only these are taken: ASCII strings whose escapes are among \" \\ \b \f \n \r \t,
 * integers of at most MAX_SAFE_DIGITS digits (no -0), keys without escapes, no key twice, at most
 * CANON_DEPTH levels. Anything else is parsed (TOOL_RESULT).
 */
struct tool {
  int32_t id_start;
  int32_t id_end;
  int32_t call_start;
  int32_t call_end;
  char key[44];
};
static struct tool TOOL;

#define CANON_CAPACITY 16384
#define CANON_DEPTH 16
#define CANON_MEMBERS 64
static uint8_t CANON[CANON_CAPACITY];
static uint32_t CANON_LENGTH;

static int canon_put(const uint8_t *bytes, uint32_t length) {
  if (CANON_LENGTH + length > CANON_CAPACITY) return 0;
  for (uint32_t k = 0; k < length; k++) CANON[CANON_LENGTH + k] = bytes[k];
  CANON_LENGTH += length;
  return 1;
}
static int canon_byte(uint8_t byte) { return canon_put(&byte, 1); }
#define CANON_TEXT(literal) canon_put((const uint8_t *)(literal), sizeof(literal) - 1)

/* What an object's members are to the fold: the data, its message, the message's source, its block. */
enum { IN_OTHER, IN_DATA, IN_MESSAGE, IN_SOURCE, IN_BLOCK };

/* What the data held, as the fold checks it (ranges of plain strings, -1 when absent or not one). */
static int32_t FOUND[12];
enum { F_ID, F_ROLE = 2, F_KIND = 4, F_CALL = 6, F_TYPE = 8, F_TOOL_CALL = 10 };

static void found(int which, int32_t start, int32_t end) {
  FOUND[which] = start;
  FOUND[which + 1] = end;
}

/* A string at P as JSON.stringify writes it: copied when it is. */
static int canon_string(int32_t *start, int32_t *end) {
  uint32_t from = P;
  if (!string()) return 0;
  for (uint32_t k = S0; k < S1; k++) {
    uint8_t c = B[k];
    if (c >= 0x80) return 0;
    if (c == BACKSLASH) {
      uint8_t x = B[++k];
      if (x != QUOTE && x != BACKSLASH && x != 0x62 && x != 0x66 && x != 0x6e && x != 0x72 && x != 0x74) return 0;
    }
  }
  *start = ESCAPED ? -1 : (int32_t)S0;
  *end = (int32_t)S1;
  return canon_put(B + from, P - from);
}

static int canon_value(int depth, int in);

/* An object's members in key order; `in` says which of the fold's objects it is. */
static int canon_object(int depth, int in) {
  uint32_t keys[CANON_MEMBERS];
  uint32_t key_ends[CANON_MEMBERS];
  uint32_t values[CANON_MEMBERS];
  int count = 0;
  P++;
  if (!take(CLOSE_BRACE)) {
    do {
      if (peek() != QUOTE || !string() || ESCAPED || count == CANON_MEMBERS) return 0;
      for (uint32_t k = S0; k < S1; k++)
        if (B[k] >= 0x80) return 0;
      keys[count] = S0;
      key_ends[count] = S1;
      if (!take(COLON)) return 0;
      space();
      values[count++] = P;
      if (!value(depth + 1)) return 0;
    } while (take(COMMA));
    if (!take(CLOSE_BRACE)) return 0;
  }
  uint32_t after = P;
  /* Insertion sort of the members by key bytes (ASCII: the order of JavaScript's sort); no key twice. */
  int order[CANON_MEMBERS];
  for (int i = 0; i < count; i++) {
    int j = i;
    while (j > 0) {
      int o = order[j - 1];
      uint32_t a = key_ends[o] - keys[o];
      uint32_t b = key_ends[i] - keys[i];
      uint32_t n = a < b ? a : b;
      int c = 0;
      for (uint32_t k = 0; k < n && c == 0; k++) c = (int)B[keys[o] + k] - (int)B[keys[i] + k];
      if (c == 0) c = (int)a - (int)b;
      if (c == 0) return 0;
      if (c < 0) break;
      order[j] = o;
      j--;
    }
    order[j] = i;
  }
  if (!canon_byte(OPEN_BRACE)) return 0;
  for (int m = 0; m < count; m++) {
    int i = order[m];
    if ((m > 0 && !canon_byte(COMMA)) || !canon_byte(QUOTE) || !canon_put(B + keys[i], key_ends[i] - keys[i]) || !canon_byte(QUOTE) || !canon_byte(COLON)) return 0;
    const uint8_t *k = B + keys[i];
    uint32_t n = key_ends[i] - keys[i];
#define KEY_IS(literal) (n == sizeof(literal) - 1 && same_bytes(k, literal, n))
    P = values[i];
    int32_t start = -1;
    int32_t end = -1;
    int inner = IN_OTHER;
    if (in == IN_DATA && KEY_IS("message")) {
      inner = IN_MESSAGE;
    } else if (in == IN_MESSAGE && KEY_IS("source")) {
      inner = IN_SOURCE;
    } else if (in == IN_MESSAGE && KEY_IS("content")) {
      /* The content array becomes its first block alone (the shape check wants exactly one). */
      if (B[P] != OPEN_BRACKET) return 0;
      P++;
      if (peek() != OPEN_BRACE) return 0;
      if (!canon_byte(OPEN_BRACKET) || !canon_object(depth + 2, IN_BLOCK) || !canon_byte(CLOSE_BRACKET)) return 0;
      if (!take(CLOSE_BRACKET)) return 0;
      continue;
    } else if (in == IN_BLOCK && KEY_IS("content")) {
      /* The tool's output (an array: tool_result_data checked it) is blanked. */
      if (!CANON_TEXT("null")) return 0;
      continue;
    }
    if (B[P] == QUOTE) {
      if (!canon_string(&start, &end)) return 0;
      if (in == IN_MESSAGE && KEY_IS("id")) found(F_ID, start, end);
      else if (in == IN_MESSAGE && KEY_IS("role")) found(F_ROLE, start, end);
      else if (in == IN_SOURCE && KEY_IS("kind")) found(F_KIND, start, end);
      else if (in == IN_SOURCE && KEY_IS("callId")) found(F_CALL, start, end);
      else if (in == IN_BLOCK && KEY_IS("type")) found(F_TYPE, start, end);
      else if (in == IN_BLOCK && KEY_IS("toolCallId")) found(F_TOOL_CALL, start, end);
    } else if (!canon_value(depth + 1, inner)) {
      return 0;
    }
#undef KEY_IS
  }
  P = after;
  return canon_byte(CLOSE_BRACE);
}

/* Any value at P (after white space) as canonicalJson writes it; `in` for an object. */
static int canon_value(int depth, int in) {
  if (depth > CANON_DEPTH) return 0;
  int c = peek();
  if (c == QUOTE) {
    int32_t start;
    int32_t end;
    return canon_string(&start, &end);
  }
  if (c == OPEN_BRACE) return canon_object(depth, in);
  if (c == OPEN_BRACKET) {
    P++;
    if (!canon_byte(OPEN_BRACKET)) return 0;
    if (!take(CLOSE_BRACKET)) {
      int first = 1;
      do {
        if ((!first && !canon_byte(COMMA)) || !canon_value(depth + 1, IN_OTHER)) return 0;
        first = 0;
      } while (take(COMMA));
      if (!take(CLOSE_BRACKET)) return 0;
    }
    return canon_byte(CLOSE_BRACKET);
  }
  uint32_t from = P;
  if (c == MINUS || (c >= 0 && is_digit((uint32_t)c))) {
    int64_t ignored;
    if (!integer(&ignored)) return 0;
  } else if (!WORD("true") && !WORD("false") && !WORD("null")) {
    return 0;
  }
  return canon_put(B + from, P - from);
}

/* The plain string FOUND[which] equals `text`. */
static int found_is(int which, const char *text, uint32_t length) {
  return FOUND[which] >= 0 && (uint32_t)(FOUND[which + 1] - FOUND[which]) == length && same_bytes(B + FOUND[which], text, length);
}
#define FOUND_IS(which, literal) found_is(which, literal, sizeof(literal) - 1)

/* SHA-256 (FIPS 180-4) of CANON, base64 into TOOL.key. */
static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
    0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
    0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
    0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
    0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
    0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t *h, const uint8_t *block) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++) w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA_K[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

static const char BASE64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void hash_canon(void) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint32_t length = CANON_LENGTH;
  uint32_t at = 0;
  for (; at + 64 <= length; at += 64) sha256_block(h, CANON + at);
  uint8_t tail[128] = {0};
  uint32_t rest = length - at;
  for (uint32_t k = 0; k < rest; k++) tail[k] = CANON[at + k];
  tail[rest] = 0x80;
  uint32_t blocks = rest + 9 <= 64 ? 1 : 2;
  uint64_t bits = (uint64_t)length * 8;
  for (int k = 0; k < 8; k++) tail[64 * blocks - 1 - k] = (uint8_t)(bits >> (8 * k));
  for (uint32_t k = 0; k < blocks; k++) sha256_block(h, tail + 64 * k);
  uint8_t digest[33];
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) digest[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
  digest[32] = 0;
  for (int i = 0, o = 0; i < 33; i += 3, o += 4) {
    uint32_t v = (uint32_t)digest[i] << 16 | (uint32_t)(i + 1 < 33 ? digest[i + 1] : 0) << 8 | (i + 2 < 33 ? digest[i + 2] : 0);
    TOOL.key[o] = BASE64[(v >> 18) & 63];
    TOOL.key[o + 1] = BASE64[(v >> 12) & 63];
    TOOL.key[o + 2] = BASE64[(v >> 6) & 63];
    TOOL.key[o + 3] = BASE64[v & 63];
  }
  TOOL.key[43] = '=';
}

/* The tool/result data at `data` (validated by tool_result_data): whether the skim folds it (TOOL filled). */
static int fold_tool_result(uint32_t data) {
  uint32_t p = P;
  P = data;
  CANON_LENGTH = 0;
  for (int i = 0; i < 12; i++) FOUND[i] = -1;
  /* The tool's output, most of the line, was read as valid by tool_result_data: not again. */
  SKIP_FROM = (uint32_t)R.content_start;
  SKIP_TO = (uint32_t)R.content_end;
  int ok = peek() == OPEN_BRACE && canon_object(0, IN_DATA);
  SKIP_FROM = 0xffffffffu;
  P = p;
  /*
   * messageShapeProblem's checks of a tool/result: an identified user message from the tool, one
   * tool-result block for its call. (A key twice or a second block was refused above; the ids of
   * the message and of the block are only found inside them.)
   */
  if (!ok || FOUND[F_ID] < 0 || FOUND[F_ID + 1] == FOUND[F_ID] || !FOUND_IS(F_ROLE, "user") || !FOUND_IS(F_KIND, "tool") ||
      FOUND[F_CALL] < 0 || FOUND[F_CALL + 1] == FOUND[F_CALL] || !FOUND_IS(F_TYPE, "tool-result") || FOUND[F_TOOL_CALL] < 0 ||
      FOUND[F_TOOL_CALL + 1] - FOUND[F_TOOL_CALL] != FOUND[F_CALL + 1] - FOUND[F_CALL] ||
      !same_bytes(B + FOUND[F_TOOL_CALL], (const char *)B + FOUND[F_CALL], (uint32_t)(FOUND[F_CALL + 1] - FOUND[F_CALL])))
    return 0;
  hash_canon();
  TOOL.id_start = FOUND[F_ID];
  TOOL.id_end = FOUND[F_ID + 1];
  TOOL.call_start = FOUND[F_CALL];
  TOOL.call_end = FOUND[F_CALL + 1];
  return 1;
}

/* The code of the type name S0..S1, 0 when it is not known. */
static int type_code(void) {
  int i = find_name(B + S0, S1 - S0, TYPES, TYPE_COUNT);
  return i < 0 ? 0 : TYPE_CODES[i];
}

static int skim(void) {
  if (!take(OPEN_BRACE)) return PARSE;
  int code = 0;
  int has_seq = 0;
  int has_time = 0;
  int64_t seq = 0;
  int64_t time = 0;
  uint32_t seen = 0;
  uint32_t row_count = 0;
  int64_t row_last_time = 0;
  int64_t last_source = -1;
  uint32_t data_at = 0;
  int appended = 0;
  int sources_read = 1;
  R.call_count = 0;
  R.step_start = -1;
  R.step_end = -1;
  R.content_start = -1;
  R.content_end = -1;
  do {
    int k = key(LINE_KEYS, COUNT(LINE_KEYS));
    if (k < 0 || (seen & BIT(k)) != 0) return PARSE;
    seen |= BIT(k);
    switch (k) {
      case K_TYPE:
        if (!plain_string()) return PARSE;
        if (S1 == S0) return PARSE;
        code = type_code();
        if (code == 0) return PARSE;
        break;
      case K_SEQ:
      case K_SEQ0:
        if (!integer(&seq) || seq < 0) return PARSE;
        has_seq = 1;
        break;
      case K_TIME:
      case K_TIME0:
        if (!integer(&time)) return PARSE;
        has_time = 1;
        break;
      case K_DATA:
        if (code == 0) return PARSE;
        if (code == TEXT_ROW || code == TOOL_ROW) {
          if (!has_time || !row_data(code == TOOL_ROW, time)) return PARSE;
          row_count = ROW_COUNT;
          row_last_time = ROW_LAST_TIME;
        } else if (code == ASSISTANT) {
          if (!assistant_data()) return PARSE;
        } else if (code == USER) {
          if (!message(0)) return PARSE;
        } else if (code == TOOL_RESULT) {
          space();
          data_at = P;
          if (!tool_result_data()) return PARSE;
        } else if (code == TURN_START || code == STEP_START || code == TOOL_CALL) {
          int wanted = code == TURN_START ? T_TURN : code == STEP_START ? T_STEP : T_CALL_ID;
          if (!tracked_data(wanted, code == TURN_START)) return PARSE;
        } else if (code == TURN_END) {
          if (!turn_end_data()) return PARSE;
        } else if (!value(0)) {
          return PARSE;
        }
        break;
      case K_SURFACE_OP:
        if (code == TOOL_RESULT) {
          space();
          if (B[P] == QUOTE) {
            if (!string()) return PARSE;
            appended = !ESCAPED && LAST_IS("append");
          } else if (!value(1)) {
            return PARSE;
          }
        } else if (!plain_string() || !LAST_IS("append")) {
          return PARSE;
        }
        break;
      case K_SOURCES:
        if (code == TOOL_RESULT) {
          /* Read as an append's sources when they are (non-empty, ascending); else only validated. */
          uint32_t at = P;
          if (sources(0)) {
            last_source = LAST_SOURCE;
          } else {
            P = at;
            sources_read = 0;
            if (!value(1)) return PARSE;
          }
          break;
        }
        if (code != ASSISTANT && code != USER) return PARSE;
        if (!sources(code == ASSISTANT)) return PARSE;
        last_source = LAST_SOURCE;
        break;
      default:
        space();
        if (!WORD("true")) return PARSE;
    }
  } while (take(COMMA));
  if (!take(CLOSE_BRACE)) return PARSE;
  space();
  if (P != E || code == 0) return PARSE;
  R.seq = has_seq ? (double)seq : __builtin_nan("");
  R.time = has_time ? (double)time : __builtin_nan("");
  if (code == TEXT_ROW || code == TOOL_ROW) {
    if (seen != ROW_LINE_KEYS) return PARSE;
    R.count = row_count;
    R.last_time = (double)row_last_time;
    return code;
  }
  if ((seen & EVENT_LINE_REQUIRED) != EVENT_LINE_REQUIRED || (seen & ROW_ONLY) != 0) return PARSE;
  if (code == PLAIN || code >= TURN_START) return (seen & EVENT_LINE_REFUSED) != 0 ? PARSE : code;
  if (code == TOOL_RESULT) {
    int folds = appended && sources_read && last_source < seq;
    return folds && fold_tool_result(data_at) ? TOOL_FOLDED : TOOL_RESULT;
  }
  if ((seen & BIT(K_SURFACE_OP)) == 0 || last_source >= seq) return PARSE;
  return code;
}

static uint32_t buffer_capacity(void) { return __builtin_wasm_memory_size(0) * PAGE - (uint32_t)&__heap_base; }

/* Where to write a line of `length` bytes (the memory grows as needed); 0 when it cannot grow. */
EXPORT(line_buffer) uint32_t line_buffer(uint32_t length) {
  uint32_t needed = length + 16;
  uint32_t capacity = buffer_capacity();
  if (needed > capacity) {
    uint32_t pages = (needed - capacity + PAGE - 1) / PAGE;
    if (__builtin_wasm_memory_grow(0, pages) == (uint32_t)-1) return 0;
  }
  return (uint32_t)&__heap_base;
}

/* Adds a known type name (written at the line buffer) and the code its lines get; 0 when the table is full. */
EXPORT(add_type) int add_type(uint32_t length, int code) {
  if (TYPE_COUNT >= MAX_TYPES || length == 0 || length > MAX_TYPE_LENGTH) return 0;
  const uint8_t *name = &__heap_base;
  for (uint32_t k = 0; k < length; k++) TYPE_TEXT[TYPE_COUNT][k] = (char)name[k];
  TYPES[TYPE_COUNT].text = TYPE_TEXT[TYPE_COUNT];
  TYPES[TYPE_COUNT].length = length;
  TYPE_CODES[TYPE_COUNT] = code;
  TYPE_COUNT++;
  return 1;
}

/* Skims the line of `length` bytes at the line buffer: PARSE, or the kind it is (see the enum). */
EXPORT(skim_line) int skim_line(uint32_t length) {
  B = &__heap_base;
  P = 0;
  E = length;
  return skim();
}

/* The first newline at or after `p` (before `e`); `e` if none. */
static uint32_t newline(const uint8_t *b, uint32_t p, uint32_t e) {
  const v128_t lf = wasm_i8x16_splat(0x0a);
  while (p + 16 <= e) {
    uint32_t mask = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(b + p), lf));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
  while (p < e && b[p] != 0x0a) p++;
  return p;
}

/* What skim_run did (read by lineSkim.ts). */
struct run {
  double event_count;
  double last_time;
  int32_t lines;
  int32_t next;
  int32_t stop_code;
  int32_t stop_end;
  int32_t reset;
};
static struct run RUN;
#define NO_LINE (-1)
#define TOO_LONG (-2)

/* What the turn/end and step/end lines of a run did to the closers' tracking (RUN.reset). */
enum { NO_RESET = 0, STEP_RESET = 1, TURN_RESET = 2 };

/*
 * Skims the complete lines of the `length` bytes at the line buffer from `start` on, for as long
 * as each is an event or packed row that only moves the count and the last time, or a turn/end or
 * step/end (which also reset the closers' tracking, whatever their data), and continues the seqs
 * from `expected`. Stops at the first other line (RUN.stop_code: its skim code, PARSE included,
 * with R filled as skim_line fills it; RUN.next..RUN.stop_end: its bytes), at a line longer than
 * `max_line` (TOO_LONG), or where no complete line is left (NO_LINE; RUN.next: the unterminated
 * rest). RUN.lines lines were read; RUN.event_count and RUN.last_time are the fold's count and
 * last time after them (last_time unset when RUN.lines is 0); RUN.reset is TURN_RESET when one of
 * them was a turn/end, else STEP_RESET when one was a step/end (a step/end after a turn/end
 * leaves what the turn/end left), else NO_RESET.
 */
EXPORT(skim_run) void skim_run(uint32_t start, uint32_t length, double expected, uint32_t max_line) {
  const uint8_t *base = &__heap_base;
  uint32_t p = start;
  int32_t lines = 0;
  double last_time = 0;
  int32_t stop = NO_LINE;
  int32_t reset = NO_RESET;
  uint32_t end = length;
  while (p < length) {
    uint32_t lf = newline(base, p, length);
    if (lf >= length) break;
    if (lf - p > max_line) {
      stop = TOO_LONG;
      end = lf;
      break;
    }
    B = base + p;
    P = 0;
    E = lf - p;
    int code = skim();
    if ((code == PLAIN || code == TEXT_ROW || code == TOOL_ROW || code == TURN_END || code == STEP_END) && R.seq == expected) {
      if (code == TURN_END) reset = TURN_RESET;
      else if (code == STEP_END && reset == NO_RESET) reset = STEP_RESET;
      if (code != TEXT_ROW && code != TOOL_ROW) {
        expected += 1;
        last_time = R.time;
      } else {
        expected += R.count;
        last_time = R.last_time;
      }
      lines++;
      p = lf + 1;
      continue;
    }
    stop = code;
    end = lf;
    break;
  }
  RUN.event_count = expected;
  RUN.last_time = last_time;
  RUN.lines = lines;
  RUN.next = (int32_t)p;
  RUN.stop_code = stop;
  RUN.stop_end = (int32_t)end;
  RUN.reset = reset;
}

EXPORT(results) uint32_t results(void) { return (uint32_t)&R; }
EXPORT(run_results) uint32_t run_results(void) { return (uint32_t)&RUN; }
EXPORT(calls) uint32_t calls(void) { return (uint32_t)CALL_IDS; }
EXPORT(tool_results) uint32_t tool_results(void) { return (uint32_t)&TOOL; }
