// spank_diag.so loaded into a stand-in for slurmd: this executable defines
// the Slurm functions the plugin imports (exported with -rdynamic), so the
// real plugin binary runs its callbacks against a Slurm version of the
// test's choosing. Proves the version guard: under another major.minor the
// plugin logs one line and touches nothing else of the job.

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm_version.h>
#include <slurm/spank.h>
}

namespace {

struct FakeSlurm {
  std::string major, minor;  // what S_SLURM_VERSION_MAJOR / _MINOR give
  spank_context_t context = S_CTX_SLURMD;
  std::vector<std::string> log;    // "<level>: <line>"
  std::vector<std::string> calls;  // every other Slurm function the plugin called
};
FakeSlurm host;

void Log(const char* level, const char* format, va_list ap) {
  char line[4096];
  std::vsnprintf(line, sizeof line, format, ap);
  host.log.push_back(std::string(level) + ": " + line);
}

}  // namespace

extern "C" {

spank_context_t spank_context(void) { return host.context; }

spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  va_list ap;
  va_start(ap, item);
  spank_err_t rc = ESPANK_NOT_AVAIL;
  if (item == S_SLURM_VERSION_MAJOR || item == S_SLURM_VERSION_MINOR) {
    char** out = va_arg(ap, char**);
    *out =
        const_cast<char*>(item == S_SLURM_VERSION_MAJOR ? host.major.c_str() : host.minor.c_str());
    rc = static_cast<spank_err_t>(ESPANK_SUCCESS);
  } else {
    host.calls.push_back("spank_get_item " + std::to_string(item));
  }
  va_end(ap);
  return rc;
}

spank_err_t spank_getenv(spank_t, const char* var, char*, int) {
  host.calls.push_back(std::string("spank_getenv ") + var);
  return ESPANK_ENV_NOEXIST;
}

spank_err_t spank_setenv(spank_t, const char* var, const char*, int) {
  host.calls.push_back(std::string("spank_setenv ") + var);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

spank_err_t spank_option_register(spank_t, struct spank_option* opt) {
  host.calls.push_back(std::string("spank_option_register ") + opt->name);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}

spank_err_t spank_option_getopt(spank_t, struct spank_option* opt, char**) {
  host.calls.push_back(std::string("spank_option_getopt ") + opt->name);
  return ESPANK_ERROR;
}

const char* spank_strerror(spank_err_t) { return "fake error"; }

void slurm_error(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  Log("error", format, ap);
  va_end(ap);
}
void slurm_info(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  Log("info", format, ap);
  va_end(ap);
}
void slurm_verbose(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  Log("verbose", format, ap);
  va_end(ap);
}
void slurm_debug(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  Log("debug", format, ap);
  va_end(ap);
}

}  // extern "C"

namespace {

using Callback = int (*)(spank_t, int, char**);

class SpankHost : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plugin_ = dlopen(SPANK_DIAG_SO, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(plugin_, nullptr) << dlerror();
  }

  Callback Find(const char* name) {
    auto fn = reinterpret_cast<Callback>(dlsym(plugin_, name));
    EXPECT_NE(fn, nullptr) << name;
    return fn;
  }

  // Runs `name` with plugstack.conf arguments `args` in `context`.
  int Call(const char* name, spank_context_t context, std::vector<std::string> args = {}) {
    host.context = context;
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    spank_t sp = nullptr;
    return Find(name)(sp, static_cast<int>(args.size()), argv.data());
  }

  void Running(const std::string& major, const std::string& minor) {
    host = FakeSlurm{major, minor, S_CTX_SLURMD, {}, {}};
  }

  static std::string Built() {
    char text[16];
    std::snprintf(text, sizeof text, "%d.%02d", SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
                  SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
    return text;
  }
  // A release other than the one the plugin was built for.
  static std::string OtherMajor() {
    return std::to_string(SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER) + 1);
  }
  static std::string BuiltMajor() {
    return std::to_string(SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER));
  }
  static std::string BuiltMinor() {
    char text[8];
    std::snprintf(text, sizeof text, "%02d", SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
    return text;
  }

  static void* plugin_;
};
void* SpankHost::plugin_ = nullptr;

TEST_F(SpankHost, UnderAnotherSlurmSlurmdLogsOneErrorLineNamingBothVersions) {
  Running(OtherMajor(), "02");
  EXPECT_EQ(Call("slurm_spank_init", S_CTX_SLURMD), 0);
  ASSERT_EQ(host.log.size(), 1u);
  EXPECT_EQ(host.log[0].rfind("error: ", 0), 0u) << host.log[0];
  EXPECT_NE(host.log[0].find("built for Slurm " + Built() + ", running under " + OtherMajor() +
                             ".02: disabled"),
            std::string::npos)
      << host.log[0];
  // --diag and --diag-on-hang stay known, so scripts that pass them still submit.
  EXPECT_EQ(host.calls, (std::vector<std::string>{"spank_option_register diag",
                                                  "spank_option_register diag-on-hang"}));
}

TEST_F(SpankHost, UnderAnotherSlurmTheJobIsLeftAlone) {
  Running(BuiltMajor(), "99");
  EXPECT_EQ(Call("slurm_spank_init", S_CTX_JOB_SCRIPT), 0);
  ASSERT_EQ(host.log.size(), 1u);
  EXPECT_EQ(host.log[0].rfind("debug: ", 0), 0u) << "one line per job stays out of slurmd's log";
  host.calls.clear();
  // An invalid argument would be logged by an active plugin (below): here
  // nothing is read, logged or started, and every callback succeeds.
  EXPECT_EQ(Call("slurm_spank_job_prolog", S_CTX_JOB_SCRIPT, {"no_such_key=1"}), 0);
  EXPECT_EQ(Call("slurm_spank_job_epilog", S_CTX_JOB_SCRIPT, {"no_such_key=1"}), 0);
  host.context = S_CTX_REMOTE;
  EXPECT_EQ(Call("slurm_spank_task_init", S_CTX_REMOTE), 0);
  EXPECT_EQ(host.log.size(), 1u);
  EXPECT_TRUE(host.calls.empty()) << host.calls.front();
}

TEST_F(SpankHost, InSbatchTheRefusalIsVerboseOnly) {
  Running(OtherMajor(), BuiltMinor());
  EXPECT_EQ(Call("slurm_spank_init", S_CTX_ALLOCATOR), 0);
  ASSERT_EQ(host.log.size(), 1u);
  EXPECT_EQ(host.log[0].rfind("verbose: ", 0), 0u) << host.log[0];
}

TEST_F(SpankHost, UnderItsOwnSlurmThePluginActs) {
  Running(BuiltMajor(), BuiltMinor());
  EXPECT_EQ(Call("slurm_spank_init", S_CTX_SLURMD), 0);
  EXPECT_TRUE(host.log.empty()) << host.log.front();
  EXPECT_EQ(Call("slurm_spank_job_prolog", S_CTX_JOB_SCRIPT, {"no_such_key=1"}), 0);
  ASSERT_EQ(host.log.size(), 1u);
  EXPECT_NE(host.log[0].find("unknown plugstack.conf argument 'no_such_key'"), std::string::npos)
      << host.log[0];
  host.calls.clear();
  EXPECT_EQ(Call("slurm_spank_task_init", S_CTX_REMOTE), 0);
  EXPECT_FALSE(host.calls.empty()) << "task_init looks up the job";
}

}  // namespace
