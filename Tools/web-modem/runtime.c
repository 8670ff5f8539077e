// The C library functions Embedded Swift calls, for wasm32-unknown-none (no libc there): a
// memory allocator and the mem* functions. Nothing else of a libc is needed by the modem.
//
// The allocator keeps one free list per power-of-two size class (16 bytes to 64 MiB): a freed
// block goes back to its class and is reused by the next allocation of that class, so the
// modem's steady state (the same buffers made and dropped for every chunk of audio) stays
// within a fixed footprint; memory is taken from the wasm heap with memory.grow and never
// returned. Single-threaded: a page's AudioWorklet runs one module instance on one thread.
#include <stddef.h>
#include <stdint.h>

extern unsigned char __heap_base;

#define HEADER 16
#define CLASSES 23

static uintptr_t heap_next;
static uintptr_t heap_end;
static void *free_lists[CLASSES];

static int size_class(size_t size) {
  size_t capacity = 16;
  int index = 0;
  while (capacity < size) {
    capacity <<= 1;
    index += 1;
    if (index >= CLASSES) return -1;
  }
  return index;
}

static void *take(size_t bytes) {
  if (heap_next == 0) heap_next = ((uintptr_t)&__heap_base + 15) & ~(uintptr_t)15;
  if (heap_end == 0) heap_end = __builtin_wasm_memory_size(0) * 65536;
  if (heap_next + bytes > heap_end) {
    size_t missing = heap_next + bytes - heap_end;
    size_t pages = (missing + 65535) / 65536;
    if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1) return NULL;
    heap_end += pages * 65536;
  }
  void *block = (void *)heap_next;
  heap_next += bytes;
  return block;
}

void *malloc(size_t size) {
  int index = size_class(size == 0 ? 1 : size);
  if (index < 0) return NULL;
  unsigned char *block = free_lists[index];
  if (block) {
    free_lists[index] = *(void **)(block + HEADER);
  } else {
    block = take(HEADER + ((size_t)16 << index));
    if (!block) return NULL;
  }
  *(int *)block = index;
  return block + HEADER;
}

void free(void *pointer) {
  if (!pointer) return;
  unsigned char *block = (unsigned char *)pointer - HEADER;
  int index = *(int *)block;
  *(void **)pointer = free_lists[index];
  free_lists[index] = block;
}

void *memset(void *destination, int value, size_t count) {
  unsigned char *out = destination;
  while (count--) *out++ = (unsigned char)value;
  return destination;
}

void *memcpy(void *restrict destination, const void *restrict source, size_t count) {
  unsigned char *out = destination;
  const unsigned char *in = source;
  while (count--) *out++ = *in++;
  return destination;
}

void *memmove(void *destination, const void *source, size_t count) {
  unsigned char *out = destination;
  const unsigned char *in = source;
  if (out < in) {
    while (count--) *out++ = *in++;
  } else {
    out += count;
    in += count;
    while (count--) *--out = *--in;
  }
  return destination;
}

int memcmp(const void *left, const void *right, size_t count) {
  const unsigned char *a = left, *b = right;
  for (; count; count--, a++, b++) {
    if (*a != *b) return *a < *b ? -1 : 1;
  }
  return 0;
}

void *calloc(size_t count, size_t size) {
  if (size && count > (size_t)-1 / size) return NULL;
  void *block = malloc(count * size);
  if (block) memset(block, 0, count * size);
  return block;
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  // Blocks are 16-byte aligned; the modem asks no more.
  if (alignment > 16) return 12;  // ENOMEM
  void *block = malloc(size);
  if (!block) return 12;
  *result = block;
  return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
  void *block = NULL;
  return posix_memalign(&block, alignment, size) == 0 ? block : NULL;
}

// Rounding half away from zero (Swift's `rounded()`), which wasm has no instruction for.
double round(double x) {
  double whole = __builtin_trunc(x);
  if (__builtin_fabs(x - whole) >= 0.5) whole += __builtin_copysign(1.0, x);
  return whole;
}

float roundf(float x) {
  float whole = __builtin_truncf(x);
  if (__builtin_fabsf(x - whole) >= 0.5f) whole += __builtin_copysignf(1.0f, x);
  return whole;
}

// Swift seeds its hash tables from here. The modem's tables hold only its own values (no
// input an attacker picks), so a fixed sequence does: a page gains nothing from seeding.
void arc4random_buf(void *buffer, size_t count) {
  static uint64_t state = 0x9e3779b97f4a7c15u;
  unsigned char *out = buffer;
  while (count--) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    *out++ = (unsigned char)state;
  }
}
