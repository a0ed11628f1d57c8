{
  "targets": [
    {
      "target_name": "webrtc_aec",
      "sources": ["webrtc-aec.cc"],
      "include_dirs": ["/usr/include/webrtc_audio_processing"],
      "defines": ["WEBRTC_AUDIO_PROCESSING_ONLY_BUILD", "WEBRTC_POSIX", "WEBRTC_LINUX"],
      "libraries": ["-lwebrtc_audio_processing"],
      "cflags_cc": ["-O2", "-Wall", "-std=c++11"]
    }
  ]
}
