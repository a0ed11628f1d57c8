/*
 * A small N-API binding to Debian's libspeexdsp: the acoustic echo canceller
 * (MDF) and the preprocessor (noise suppression, residual echo suppression).
 * One object per call leg: `new EchoCanceller(frameSize, filterLength,
 * sampleRate, denoise)`, `process(mic, reference, out)` per frame of 16-bit
 * PCM (the preprocessor runs only with `denoise`, and then delays `out` by one
 * frame), `close()` frees the native state (idempotent; the finalizer frees it
 * too if a leg forgets). Everything else (alignment, framing, config) is in
 * src/codecs/echo-canceller.ts.
 *
 * `new NoiseSuppressor(frameSize, sampleRate, suppressDb)` is the
 * preprocessor alone (no echo state): `process(pcm)` denoises one frame in
 * place; src/codecs/noise-suppressor.ts.
 */
#include <node_api.h>
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
  SpeexEchoState *echo;
  SpeexPreprocessState *pre;
  int frame;
  /* Run the preprocessor: only with denoise. Without it the preprocessor applies no gain (libspeexdsp sets every
   * band's gain to 1 when denoise is off, residual echo suppression included) and only delays the audio by one frame
   * (its overlap-add); bench/onset-latency.bench.ts measured that frame as 20 ms on every onset. */
  int preprocess;
} Canceller;

static void release(Canceller *c) {
  if (c->pre) speex_preprocess_state_destroy(c->pre);
  if (c->echo) speex_echo_state_destroy(c->echo);
  c->pre = NULL;
  c->echo = NULL;
}

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  release((Canceller *)data);
  free(data);
}

static napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, "ERR_INVALID_ARG", msg);
  return NULL;
}

static int32_t int_arg(napi_env env, napi_value v, int32_t fallback) {
  int32_t out = fallback;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) == napi_ok && t == napi_number) napi_get_value_int32(env, v, &out);
  return out;
}

static napi_value construct(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], self;
  napi_get_cb_info(env, info, &argc, argv, &self, NULL);
  if (argc < 3) return throw_type(env, "EchoCanceller(frameSize, filterLength, sampleRate, denoise?)");
  int32_t frame = int_arg(env, argv[0], 0), filter = int_arg(env, argv[1], 0), rate = int_arg(env, argv[2], 0);
  bool denoise = false;
  if (argc > 3) napi_get_value_bool(env, argv[3], &denoise);
  if (frame < 16 || frame > 4096 || filter < frame || filter > 65536 || rate < 8000 || rate > 48000)
    return throw_type(env, "EchoCanceller: frameSize 16-4096, filterLength frameSize-65536, sampleRate 8000-48000");
  Canceller *c = calloc(1, sizeof(Canceller));
  if (!c) return throw_type(env, "EchoCanceller: out of memory");
  c->frame = frame;
  c->preprocess = denoise;
  c->echo = speex_echo_state_init(frame, filter);
  c->pre = speex_preprocess_state_init(frame, rate);
  if (!c->echo || !c->pre) {
    release(c);
    free(c);
    return throw_type(env, "EchoCanceller: libspeexdsp refused the state");
  }
  speex_echo_ctl(c->echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
  speex_preprocess_ctl(c->pre, SPEEX_PREPROCESS_SET_ECHO_STATE, c->echo);
  int on = denoise ? 1 : 0;
  speex_preprocess_ctl(c->pre, SPEEX_PREPROCESS_SET_DENOISE, &on);
  int off = 0;
  speex_preprocess_ctl(c->pre, SPEEX_PREPROCESS_SET_AGC, &off);
  speex_preprocess_ctl(c->pre, SPEEX_PREPROCESS_SET_DEREVERB, &off);
  napi_wrap(env, self, c, finalize, NULL, NULL);
  return self;
}

static int16_t *int16_view(napi_env env, napi_value v, size_t want) {
  bool is_typed = false;
  napi_is_typedarray(env, v, &is_typed);
  if (!is_typed) return NULL;
  napi_typedarray_type type;
  size_t length;
  void *data;
  napi_get_typedarray_info(env, v, &type, &length, &data, NULL, NULL);
  if (type != napi_int16_array || length != want) return NULL;
  return (int16_t *)data;
}

static napi_value process(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], self;
  napi_get_cb_info(env, info, &argc, argv, &self, NULL);
  Canceller *c;
  if (napi_unwrap(env, self, (void **)&c) != napi_ok || !c->echo)
    return throw_type(env, "EchoCanceller: closed");
  if (argc < 3) return throw_type(env, "process(mic, reference, out): three Int16Arrays of frameSize");
  int16_t *mic = int16_view(env, argv[0], c->frame), *ref = int16_view(env, argv[1], c->frame),
          *out = int16_view(env, argv[2], c->frame);
  if (!mic || !ref || !out) return throw_type(env, "process(mic, reference, out): three Int16Arrays of frameSize");
  speex_echo_cancellation(c->echo, mic, ref, out);
  if (c->preprocess) speex_preprocess_run(c->pre, out);
  return NULL;
}

static napi_value close_state(napi_env env, napi_callback_info info) {
  napi_value self;
  napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
  Canceller *c;
  if (napi_unwrap(env, self, (void **)&c) == napi_ok) release(c);
  return NULL;
}

/* The preprocessor alone: noise suppression independent of echo cancellation. */
typedef struct {
  SpeexPreprocessState *pre;
  int frame;
} Suppressor;

static void suppressor_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  Suppressor *s = (Suppressor *)data;
  if (s->pre) speex_preprocess_state_destroy(s->pre);
  free(s);
}

static napi_value suppressor_construct(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], self;
  napi_get_cb_info(env, info, &argc, argv, &self, NULL);
  if (argc < 3) return throw_type(env, "NoiseSuppressor(frameSize, sampleRate, suppressDb)");
  int32_t frame = int_arg(env, argv[0], 0), rate = int_arg(env, argv[1], 0), db = int_arg(env, argv[2], 1);
  if (frame < 16 || frame > 4096 || rate < 8000 || rate > 48000 || db > -1 || db < -90)
    return throw_type(env, "NoiseSuppressor: frameSize 16-4096, sampleRate 8000-48000, suppressDb -90..-1");
  Suppressor *s = calloc(1, sizeof(Suppressor));
  if (!s) return throw_type(env, "NoiseSuppressor: out of memory");
  s->frame = frame;
  s->pre = speex_preprocess_state_init(frame, rate);
  if (!s->pre) {
    free(s);
    return throw_type(env, "NoiseSuppressor: libspeexdsp refused the state");
  }
  int on = 1, off = 0;
  speex_preprocess_ctl(s->pre, SPEEX_PREPROCESS_SET_DENOISE, &on);
  speex_preprocess_ctl(s->pre, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &db);
  speex_preprocess_ctl(s->pre, SPEEX_PREPROCESS_SET_AGC, &off);
  speex_preprocess_ctl(s->pre, SPEEX_PREPROCESS_SET_DEREVERB, &off);
  napi_wrap(env, self, s, suppressor_finalize, NULL, NULL);
  return self;
}

static napi_value suppressor_process(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], self;
  napi_get_cb_info(env, info, &argc, argv, &self, NULL);
  Suppressor *s;
  if (napi_unwrap(env, self, (void **)&s) != napi_ok || !s->pre) return throw_type(env, "NoiseSuppressor: closed");
  int16_t *pcm = argc < 1 ? NULL : int16_view(env, argv[0], s->frame);
  if (!pcm) return throw_type(env, "process(pcm): an Int16Array of frameSize");
  speex_preprocess_run(s->pre, pcm);
  return NULL;
}

static napi_value suppressor_close(napi_env env, napi_callback_info info) {
  napi_value self;
  napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
  Suppressor *s;
  if (napi_unwrap(env, self, (void **)&s) == napi_ok && s->pre) {
    speex_preprocess_state_destroy(s->pre);
    s->pre = NULL;
  }
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor methods[] = {
      {"process", NULL, process, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_state, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value cls;
  napi_define_class(env, "EchoCanceller", NAPI_AUTO_LENGTH, construct, NULL, 2, methods, &cls);
  napi_set_named_property(env, exports, "EchoCanceller", cls);
  napi_property_descriptor suppressor_methods[] = {
      {"process", NULL, suppressor_process, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, suppressor_close, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value suppressor;
  napi_define_class(env, "NoiseSuppressor", NAPI_AUTO_LENGTH, suppressor_construct, NULL, 2, suppressor_methods,
                    &suppressor);
  napi_set_named_property(env, exports, "NoiseSuppressor", suppressor);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
