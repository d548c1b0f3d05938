/*
 * A measurement prototype, not part of the server: how fast WebAssembly with 128-bit SIMD can
 * find the structure of dsh's JSONL on this machine, simdjson's way. Stage 1 classifies 64 bytes
 * at a time into bitmasks (quotes, backslashes, control bytes, newlines, { } [ ] : ,), finds the
 * escaped characters and the inside of strings by carries and a prefix XOR, and flattens the
 * structural positions into an index; `walk` is a minimal stage 2 over that index (nesting and
 * line ends only; no scalars, no keys). bench/ANALYSIS.md ("Cold index") has the figures; run
 * `node bench/prototypes/stage1.mjs <sessions root>` (needs clang-14 and wasm-ld-14).
 */
#include <stdint.h>
#include <wasm_simd128.h>
#define EXPORT(name) __attribute__((export_name(#name)))
extern unsigned char __heap_base;
static uint64_t prev_in_string = 0;
static uint64_t structurals = 0, errors = 0, newlines = 0;
static uint32_t *IDX; static uint32_t NIDX;
EXPORT(set_index) void set_index(uint32_t at) { IDX = (uint32_t *)at; }

static inline uint64_t mask16(v128_t v, v128_t c) { return (uint64_t)wasm_i8x16_bitmask(wasm_i8x16_eq(v, c)); }
static inline uint64_t lt16(v128_t v, v128_t c) { return (uint64_t)wasm_i8x16_bitmask(wasm_u8x16_lt(v, c)); }

static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1; x ^= x << 2; x ^= x << 4; x ^= x << 8; x ^= x << 16; x ^= x << 32; return x;
}
/* The characters a backslash escapes (an escape run's odd members' successors), with the carry into the next block. */
static uint64_t next_is_escaped = 0;
static inline uint64_t escaped(uint64_t backslash) {
  const uint64_t odd_bits = 0xAAAAAAAAAAAAAAAAULL;
  uint64_t potential_escape = backslash & ~next_is_escaped;
  uint64_t maybe_escaped = potential_escape << 1;
  uint64_t maybe_escaped_and_odd_bits = maybe_escaped | odd_bits;
  uint64_t even_series_codes_and_odd_bits = maybe_escaped_and_odd_bits - potential_escape;
  uint64_t escape_and_terminal_code = even_series_codes_and_odd_bits ^ odd_bits;
  uint64_t escaped_chars = escape_and_terminal_code ^ (backslash | next_is_escaped);
  uint64_t escape = escape_and_terminal_code & backslash;
  next_is_escaped = escape >> 63;
  return escaped_chars;
}

EXPORT(buffer) uint32_t buffer(void) { return (uint32_t)&__heap_base; }
EXPORT(grow) int grow(uint32_t pages) { return __builtin_wasm_memory_grow(0, pages); }
EXPORT(reset) void reset(void) { NIDX = 0; prev_in_string = next_is_escaped = 0; structurals = errors = newlines = 0; }
EXPORT(result) double result(int which) { return which == 0 ? (double)structurals : which == 1 ? (double)errors : (double)newlines; }

EXPORT(run) void run(uint32_t length) {
  const uint8_t *b = &__heap_base;
  const v128_t q = wasm_i8x16_splat('"'), bsl = wasm_i8x16_splat('\\'), ctl = wasm_i8x16_splat(0x20), nl = wasm_i8x16_splat('\n');
  uint32_t p = 0;
  for (; p + 64 <= length; p += 64) {
    uint64_t quote = 0, back = 0, control = 0, op = 0, line = 0;
    for (int k = 0; k < 4; k++) {
      v128_t v = wasm_v128_load(b + p + 16 * k);
      quote |= mask16(v, q) << (16 * k);
      back |= mask16(v, bsl) << (16 * k);
      control |= lt16(v, ctl) << (16 * k);
      line |= mask16(v, nl) << (16 * k);
      /* { [ } ] differ from their pair by 0x20; : and , already have that bit */
      v128_t x = wasm_v128_or(v, wasm_i8x16_splat(0x20));
      v128_t hit = wasm_v128_or(wasm_v128_or(wasm_i8x16_eq(x, wasm_i8x16_splat(0x7b)), wasm_i8x16_eq(x, wasm_i8x16_splat(0x7d))),
                                wasm_v128_or(wasm_i8x16_eq(x, wasm_i8x16_splat(0x3a)), wasm_i8x16_eq(x, wasm_i8x16_splat(0x2c))));
      op |= (uint64_t)wasm_i8x16_bitmask(hit) << (16 * k);
    }
    uint64_t esc = escaped(back);
    uint64_t real_quote = quote & ~esc;
    uint64_t in_string = prefix_xor(real_quote) ^ prev_in_string;
    prev_in_string = (uint64_t)((int64_t)in_string >> 63);
    errors += __builtin_popcountll(control & in_string & ~line);
    uint64_t st = (op & ~in_string) | real_quote | (line & ~in_string);
    structurals += __builtin_popcountll(st);
    if (IDX) { while (st) { IDX[NIDX++] = p + __builtin_ctzll(st); st &= st - 1; } }
    newlines += __builtin_popcountll(line & ~in_string);
  }
}

/* Stage 2, minimal: walks the structural indexes, checking nesting, that ':' is inside an object,
   that strings close and that lines end at depth 0 (no scalars, no keys): a lower bound on a
   structural walk's cost. */
EXPORT(walk) double walk(void) {
  const uint8_t *b = &__heap_base;
  uint8_t stack[256]; int depth = 0; uint32_t bad = 0, lines = 0;
  for (uint32_t i = 0; i < NIDX; i++) {
    uint8_t c = b[IDX[i]];
    switch (c) {
      case '{': if (depth < 255) stack[depth++] = '{'; break;
      case '[': if (depth < 255) stack[depth++] = '['; break;
      case '}': if (depth == 0 || stack[--depth] != '{') bad++; break;
      case ']': if (depth == 0 || stack[--depth] != '[') bad++; break;
      case ':': if (depth == 0 || stack[depth - 1] != '{') bad++; break;
      case ',': if (depth == 0) bad++; break;
      case '"': i++; /* the closing quote */ if (i >= NIDX || b[IDX[i]] != '"') bad++; break;
      case '\n': if (depth != 0) bad++; depth = 0; lines++; break;
      default: bad++;
    }
  }
  return (double)bad * 1e9 + lines;
}
