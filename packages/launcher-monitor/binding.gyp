{
  "targets": [
    {
      "target_name": "podvirt_monitor",
      "sources": ["src/native/monitor.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
