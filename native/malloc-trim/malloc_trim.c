/*
 * An N-API binding to glibc's malloc_trim(3) and mallinfo2(3): the only way
 * a Node process gives back to the kernel the memory that its native side
 * (socket read buffers, ArrayBuffer backing stores) freed in the middle of
 * glibc's heap. glibc returns memory by itself only from the heap's top, so
 * after a burst (a thousand calls streaming) the freed pages stay resident
 * until something reuses them: docs/performance.md, "Memory per held call".
 *
 *   trim()  -> true when glibc released memory (malloc_trim(0)); false where
 *              it is not glibc (musl, macOS: the function is not there)
 *   info()  -> { heapBytes, inUseBytes, freeBytes, mmapBytes } of the main
 *              and thread arenas (mallinfo2), or null where it is not glibc
 *
 * src/ops/native-memory.ts decides when to call it.
 */
#include <node_api.h>
#include <stdint.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
#if defined(__GLIBC__)
  napi_get_boolean(env, malloc_trim(0) == 1, &out);
#else
  napi_get_boolean(env, false, &out);
#endif
  return out;
}

static void set_number(napi_env env, napi_value obj, const char *key, double value) {
  napi_value v;
  napi_create_double(env, value, &v);
  napi_set_named_property(env, obj, key, v);
}

static napi_value info(napi_env env, napi_callback_info cbinfo) {
  (void)cbinfo;
  napi_value out;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 m = mallinfo2();
  napi_create_object(env, &out);
  /* arena: bytes of the sbrk heap and the thread arenas; uordblks in use, fordblks free in them. */
  set_number(env, out, "heapBytes", (double)m.arena);
  set_number(env, out, "inUseBytes", (double)m.uordblks);
  set_number(env, out, "freeBytes", (double)m.fordblks);
  set_number(env, out, "mmapBytes", (double)m.hblkhd);
#else
  napi_get_null(env, &out);
#endif
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"trim", NULL, trim, NULL, NULL, NULL, napi_default, NULL},
      {"info", NULL, info, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
