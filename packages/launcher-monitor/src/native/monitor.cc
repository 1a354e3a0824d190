// The few system calls a PID-1 monitor needs that Node does not expose: becoming a child
// subreaper, and waiting for one exited child BY PID. Reaping by pid (never waitpid(-1)) is
// what keeps the monitor from stealing the exit status of children libuv spawned and waits
// for itself.
#include <napi.h>

#include <cerrno>
#include <cstring>
#include <sys/prctl.h>
#include <sys/wait.h>

namespace {

Napi::Value ThrowErrno(Napi::Env env, const char* syscall, int err) {
  Napi::Error error = Napi::Error::New(env, std::string(syscall) + ": " + std::strerror(err));
  error.Set("errno", Napi::Number::New(env, err));
  error.Set("syscall", Napi::String::New(env, syscall));
  error.ThrowAsJavaScriptException();
  return env.Undefined();
}

const char* CodeName(int code) {
  switch (code) {
    case CLD_EXITED: return "exited";
    case CLD_KILLED: return "killed";
    case CLD_DUMPED: return "dumped";
    default: return "other";
  }
}

// waitid() for exited children only, never blocking. Returns {pid, code, status} or
// undefined when no matching child has exited (or there is no such child at all).
Napi::Value WaitExited(const Napi::CallbackInfo& info, idtype_t idtype, id_t id, int extra) {
  Napi::Env env = info.Env();
  siginfo_t si;
  for (;;) {
    std::memset(&si, 0, sizeof si);  // Linux leaves si_pid untouched when nothing is waitable
    if (waitid(idtype, id, &si, WEXITED | WNOHANG | extra) == 0) break;
    if (errno == EINTR) continue;
    if (errno == ECHILD) return env.Undefined();
    return ThrowErrno(env, "waitid", errno);
  }
  if (si.si_pid == 0) return env.Undefined();
  Napi::Object result = Napi::Object::New(env);
  result.Set("pid", Napi::Number::New(env, si.si_pid));
  result.Set("code", Napi::String::New(env, CodeName(si.si_code)));
  result.Set("status", Napi::Number::New(env, si.si_status));
  return result;
}

bool ReadPid(const Napi::CallbackInfo& info, pid_t* pid) {
  if (info.Length() < 1 || !info[0].IsNumber()) return false;
  int64_t value = info[0].As<Napi::Number>().Int64Value();
  if (value <= 0 || value > 0x3fffffff) return false;
  *pid = static_cast<pid_t>(value);
  return true;
}

Napi::Value SetChildSubreaper(const Napi::CallbackInfo& info) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    return ThrowErrno(info.Env(), "prctl", errno);
  }
  return info.Env().Undefined();
}

Napi::Value IsChildSubreaper(const Napi::CallbackInfo& info) {
  int value = 0;
  if (prctl(PR_GET_CHILD_SUBREAPER, &value, 0, 0, 0) != 0) {
    return ThrowErrno(info.Env(), "prctl", errno);
  }
  return Napi::Boolean::New(info.Env(), value != 0);
}

// peekExited([pid]): the exit of `pid`, or of any one child, left waitable (WNOWAIT), so
// that the caller can still read /proc/<pid> of the zombie and decide whether it owns it.
Napi::Value PeekExited(const Napi::CallbackInfo& info) {
  if (info.Length() == 0 || info[0].IsUndefined()) return WaitExited(info, P_ALL, 0, WNOWAIT);
  pid_t pid;
  if (!ReadPid(info, &pid)) {
    Napi::TypeError::New(info.Env(), "pid must be a positive integer").ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  return WaitExited(info, P_PID, static_cast<id_t>(pid), WNOWAIT);
}

// reap(pid): collects the exit of exactly `pid` if it has exited; undefined otherwise.
Napi::Value Reap(const Napi::CallbackInfo& info) {
  pid_t pid;
  if (!ReadPid(info, &pid)) {
    Napi::TypeError::New(info.Env(), "pid must be a positive integer").ThrowAsJavaScriptException();
    return info.Env().Undefined();
  }
  return WaitExited(info, P_PID, static_cast<id_t>(pid), 0);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("setChildSubreaper", Napi::Function::New(env, SetChildSubreaper, "setChildSubreaper"));
  exports.Set("isChildSubreaper", Napi::Function::New(env, IsChildSubreaper, "isChildSubreaper"));
  exports.Set("peekExited", Napi::Function::New(env, PeekExited, "peekExited"));
  exports.Set("reap", Napi::Function::New(env, Reap, "reap"));
  return exports;
}

}  // namespace

NODE_API_MODULE(podvirt_monitor, Init)
