/*
 * The echo figures' peer, for benches only (bench/lib/webrtc-aec-peer.ts): an N-API binding to Debian's
 * webrtc-audio-processing 0.3, WebRTC's echo canceller as PulseAudio's module-echo-cancel runs it (the AEC with
 * its extended filter and delay-agnostic mode, no drift compensation). The server never loads it.
 *
 * `new EchoCanceller(sampleRate, suppression)`: 8000 or 16000 Hz; suppression 0 low, 1 moderate, 2 high (the
 * AEC's non-linear processing). `process(mic, reference, out)`: Int16Arrays of the same whole 10 ms frames; the
 * reference is what was played over the same span as `mic` (the library finds the delay itself). `close()`
 * frees the state (idempotent; the finalizer frees it too).
 */
#include <node_api.h>
#include <webrtc/modules/audio_processing/include/audio_processing.h>
#include <webrtc/modules/interface/module_common_types.h>

#include <cstdio>
#include <cstring>

namespace {

struct Canceller {
  webrtc::AudioProcessing *apm = nullptr;
  int rate = 8000;
};

void release(Canceller *c) {
  delete c->apm;
  c->apm = nullptr;
}

void finalize(napi_env, void *data, void *) {
  Canceller *c = static_cast<Canceller *>(data);
  release(c);
  delete c;
}

napi_value fail(napi_env env, const char *msg) {
  napi_throw_type_error(env, "ERR_INVALID_ARG", msg);
  return nullptr;
}

napi_value construct(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], self;
  napi_get_cb_info(env, info, &argc, argv, &self, nullptr);
  int32_t rate = 0, level = 1;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &rate) != napi_ok || (rate != 8000 && rate != 16000))
    return fail(env, "EchoCanceller(sampleRate 8000 or 16000, suppression 0-2)");
  if (argc > 1 && (napi_get_value_int32(env, argv[1], &level) != napi_ok || level < 0 || level > 2))
    return fail(env, "EchoCanceller: suppression is 0 (low), 1 (moderate) or 2 (high)");
  webrtc::Config config;
  config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
  config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
  Canceller *c = new Canceller();
  c->rate = rate;
  c->apm = webrtc::AudioProcessing::Create(config);
  if (!c->apm) {
    delete c;
    return fail(env, "EchoCanceller: webrtc::AudioProcessing::Create failed");
  }
  // The int16 interface wants the input, output and reverse rates alike, set before the first reverse frame.
  if (c->apm->Initialize(rate, rate, rate, webrtc::AudioProcessing::kMono, webrtc::AudioProcessing::kMono,
                         webrtc::AudioProcessing::kMono) != webrtc::AudioProcessing::kNoError) {
    release(c);
    delete c;
    return fail(env, "EchoCanceller: webrtc::AudioProcessing refused the rate");
  }
  webrtc::EchoCancellation *ec = c->apm->echo_cancellation();
  static const webrtc::EchoCancellation::SuppressionLevel levels[] = {
      webrtc::EchoCancellation::kLowSuppression, webrtc::EchoCancellation::kModerateSuppression,
      webrtc::EchoCancellation::kHighSuppression};
  if (ec->enable_drift_compensation(false) != 0 || ec->set_suppression_level(levels[level]) != 0 ||
      ec->Enable(true) != 0) {
    release(c);
    delete c;
    return fail(env, "EchoCanceller: the AEC refused its settings");
  }
  napi_wrap(env, self, c, finalize, nullptr, nullptr);
  return self;
}

Canceller *unwrap(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv) {
  napi_value self;
  napi_get_cb_info(env, info, argc, argv, &self, nullptr);
  void *data = nullptr;
  napi_unwrap(env, self, &data);
  return static_cast<Canceller *>(data);
}

int16_t *int16s(napi_env env, napi_value v, size_t *length) {
  napi_typedarray_type type;
  void *data = nullptr;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, v, &type, length, &data, &buffer, &offset) != napi_ok || type != napi_int16_array)
    return nullptr;
  return static_cast<int16_t *>(data);
}

napi_value process(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  Canceller *c = unwrap(env, info, &argc, argv);
  if (!c || !c->apm) return fail(env, "EchoCanceller: closed");
  if (argc < 3) return fail(env, "process(mic, reference, out)");
  size_t nm = 0, nr = 0, no = 0;
  int16_t *mic = int16s(env, argv[0], &nm), *ref = int16s(env, argv[1], &nr), *out = int16s(env, argv[2], &no);
  const size_t ten = static_cast<size_t>(c->rate / 100);
  if (!mic || !ref || !out || nm != nr || nm != no || nm == 0 || nm % ten != 0)
    return fail(env, "process(mic, reference, out): Int16Arrays of the same whole 10 ms frames");
  for (size_t at = 0; at < nm; at += ten) {
    webrtc::AudioFrame far;
    far.UpdateFrame(0, 0, ref + at, ten, c->rate, webrtc::AudioFrame::kNormalSpeech, webrtc::AudioFrame::kVadUnknown, 1);
    webrtc::AudioFrame near;
    near.UpdateFrame(0, 0, mic + at, ten, c->rate, webrtc::AudioFrame::kNormalSpeech, webrtc::AudioFrame::kVadUnknown, 1);
    // The reported delay is 0: the delay-agnostic mode estimates it (PulseAudio reports its own buffers' latency).
    // A warning (kBadStreamParameterWarning) is not fatal; an error is.
    int code = c->apm->ProcessReverseStream(&far);
    if (code == webrtc::AudioProcessing::kNoError || code == webrtc::AudioProcessing::kBadStreamParameterWarning)
      code = c->apm->set_stream_delay_ms(0);
    if (code == webrtc::AudioProcessing::kNoError || code == webrtc::AudioProcessing::kBadStreamParameterWarning)
      code = c->apm->ProcessStream(&near);
    if (code != webrtc::AudioProcessing::kNoError && code != webrtc::AudioProcessing::kBadStreamParameterWarning) {
      char msg[80];
      snprintf(msg, sizeof msg, "EchoCanceller: the AEC refused a frame (error %d)", code);
      return fail(env, msg);
    }
    std::memcpy(out + at, near.data_, ten * sizeof(int16_t));
  }
  return nullptr;
}

napi_value close(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  Canceller *c = unwrap(env, info, &argc, nullptr);
  if (c) release(c);
  return nullptr;
}

napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor methods[] = {
      {"process", nullptr, process, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"close", nullptr, close, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_value cls;
  napi_define_class(env, "EchoCanceller", NAPI_AUTO_LENGTH, construct, nullptr, 2, methods, &cls);
  napi_set_named_property(env, exports, "EchoCanceller", cls);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
