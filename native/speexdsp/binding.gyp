{
  "targets": [
    {
      "target_name": "speexdsp",
      "sources": ["speexdsp.c"],
      "libraries": ["-lspeexdsp"],
      "cflags": ["-O2", "-Wall"]
    }
  ]
}
