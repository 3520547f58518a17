#include "cuvil/targets/cpu/Toolchain.h"

#include "cuvil/support/FileUtil.h"
#include "cuvil/support/Interrupt.h"
#include "cuvil/support/StatusMacros.h"
#include "cuvil/targets/cpu/SymbolPrefix.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <functional>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace cuvil::cpu {
namespace {

/// Removes a directory tree (flat: our build directories have no subdirs).
void removeDir(const std::string &dir) {
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..")
        ::unlink((dir + "/" + name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

/// How a child ended, for a person: "exited with status 1", "was killed by
/// signal 11 (Segmentation fault)".
std::string describeExit(int status) {
  if (WIFEXITED(status))
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  return absl::StrCat("ended with wait status ", status);
}

/// The last `limit` bytes of a tool's output (a failing compile of a big
/// model can print megabytes), or a note that it printed nothing.
std::string outputTail(const std::string &output, size_t limit = 16 << 10) {
  if (output.empty())
    return "(it printed nothing)";
  if (output.size() <= limit)
    return output;
  return absl::StrCat("... (", output.size() - limit, " bytes cut)\n",
                      output.substr(output.size() - limit));
}

/// Runs `argv` in `dir`, in a process group of its own (so that an
/// interrupt of cuvilc ends it and all it started); on failure returns the
/// command, how it ended and what it printed.
absl::Status run(const std::vector<std::string> &argv, const std::string &dir,
                 const std::string &what) {
  if (int signal = pendingInterrupt())
    return absl::CancelledError(
        absl::StrCat("interrupted by signal ", signal, " before ", what));
  std::string log = dir + "/toolchain.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  // The compiler runs in the build directory (for .incbin "weights.bin").
  std::vector<std::string> shellArgs = {"/bin/sh", "-c",
                                        "cd \"$0\" && exec \"$@\"", dir};
  std::vector<char *> full;
  for (std::string &a : shellArgs)
    full.push_back(a.data());
  full.insert(full.end(), args.begin(), args.end());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid;
  int rc =
      posix_spawn(&pid, "/bin/sh", &actions, &attributes, full.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0)
    return absl::InternalError(
        absl::StrCat("cannot run ", argv[0], ": ", std::strerror(rc)));
  setInterruptibleChild(pid);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  setInterruptibleChild(0);
  if (int signal = pendingInterrupt())
    return absl::CancelledError(
        absl::StrCat("interrupted by signal ", signal, " while ", what));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return absl::OkStatus();
  absl::StatusOr<std::string> output = readFile(log);
  return absl::InternalError(absl::StrCat(
      what, " failed: ", argv[0], " ", describeExit(status), ".\nCommand (in ",
      dir, "): ", absl::StrJoin(argv, " "), "\nIts output:\n",
      output.ok() ? outputTail(*output) : std::string("(none was kept)"),
      "\nSet CUVIL_KEEP_BUILD_DIR=1 to keep the build folder and rerun the "
      "command by hand."));
}

/// An LLVM tool beside the C compiler (so $CUVIL_CLANG brings its own), or
/// LLVM 22's.
std::string llvmToolPath(const std::string &name) {
  std::string clang = getClangPath();
  std::string beside = clang.substr(0, clang.rfind('/') + 1) + name;
  if (::access(beside.c_str(), X_OK) == 0)
    return beside;
  return "/usr/lib/llvm-22/bin/" + name;
}

/// Writes the sources into `dir` and compiles model.o and abi.o (with the
/// weights blob) there.
absl::Status compileObjects(const std::string &dir, const EmittedModel &model,
                            const CpuTarget &cpu) {
  RETURN_IF_ERROR(writeFileAtomically(dir + "/model.h", model.header));
  RETURN_IF_ERROR(writeFileAtomically(dir + "/model.c", model.modelSource));
  RETURN_IF_ERROR(writeFileAtomically(
      dir + "/abi.c", model.abiSource + "\n" + model.weightsAsm));
  RETURN_IF_ERROR(writeFileAtomically(dir + "/weights.bin", model.weightsBlob));

  std::string clang = getClangPath();
  if (::access(clang.c_str(), X_OK) != 0)
    return absl::FailedPreconditionError(absl::StrCat(
        "the C compiler '", clang,
        "' is missing; run scripts/bootstrap (or set CUVIL_CLANG)"));
  std::vector<std::string> common = {clang,
                                     "--target=" + cpu.triple,
                                     "-std=c99",
                                     "-fPIC",
                                     "-fvisibility=hidden",
                                     "-fno-math-errno",
                                     "-Wno-everything",
                                     "-c"};
  auto withArgs = [&](const std::vector<std::string> &flags,
                      std::vector<std::string> extra) {
    std::vector<std::string> argv = common;
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  RETURN_IF_ERROR(run(withArgs(cpu.modelFlags, {"-O3", "-ffp-contract=fast",
                                                "model.c", "-o", "model.o"}),
                      dir, "compiling the model"));
  // The entry points must run on any CPU of the architecture to report an
  // unsupported one.
  return run(
      withArgs(cpu.entryFlags, {"-O2", "-std=gnu99", "abi.c", "-o", "abi.o"}),
      dir, "compiling the entry points");
}

/// llvm-objcopy's arguments renaming the ABI functions to `prefix`'s names.
std::vector<std::string> renameArguments(llvm::StringRef prefix) {
  std::vector<std::string> args;
  if (prefix.empty())
    return args;
  for (const char *function : kAbiFunctionNames)
    args.push_back(absl::StrCat("--redefine-sym=", function, "=",
                                prefixedSymbol(function, prefix)));
  return args;
}

/// Links model.so in `dir` from the objects compileObjects left there.
absl::Status linkSharedObject(const std::string &dir, const CpuTarget &cpu,
                              llvm::StringRef prefix) {
  std::string exports = "{\n  global:\n";
  for (const char *function : kAbiFunctionNames)
    absl::StrAppend(&exports, "    ", prefixedSymbol(function, prefix), ";\n");
  absl::StrAppend(&exports, "  local: *;\n};\n");
  RETURN_IF_ERROR(writeFileAtomically(dir + "/exports.map", exports));
  std::vector<std::string> renames = renameArguments(prefix);
  if (!renames.empty())
    for (const char *object : {"model.o", "abi.o"}) {
      std::vector<std::string> argv = {llvmToolPath("llvm-objcopy")};
      argv.insert(argv.end(), renames.begin(), renames.end());
      argv.push_back(object);
      RETURN_IF_ERROR(run(argv, dir, "renaming the ABI's symbols"));
    }
  return run({getClangPath(), "--target=" + cpu.triple, "-shared",
              "-fuse-ld=lld", "-o", "model.so", "model.o", "abi.o",
              "-Wl,--version-script=exports.map",
              "-Wl,-z,noexecstack", "-Wl,-z,relro", "-Wl,-z,now",
              "-Wl,--as-needed", "-Wl,--build-id", "-lm"},
             dir, "linking");
}

/// Archives the objects in `dir` as model.a: one relocatable object whose
/// only global symbols are the ABI's (every hidden symbol made local, so
/// two models' kernels and weights cannot clash in one program).
absl::Status archiveStaticLibrary(const std::string &dir,
                                  llvm::StringRef prefix) {
  RETURN_IF_ERROR(run({llvmToolPath("ld.lld"), "-r", "-o", "combined.o",
                       "model.o", "abi.o"},
                      dir, "combining the objects"));
  std::vector<std::string> objcopy = {llvmToolPath("llvm-objcopy"),
                                      "--localize-hidden"};
  std::vector<std::string> renames = renameArguments(prefix);
  objcopy.insert(objcopy.end(), renames.begin(), renames.end());
  objcopy.push_back("combined.o");
  RETURN_IF_ERROR(run(objcopy, dir, "hiding the model's internal symbols"));
  return run({llvmToolPath("llvm-ar"), "rcsD", "model.a", "combined.o"}, dir,
             "archiving");
}

/// Runs `build` in a fresh temporary folder and returns the bytes of the
/// file it leaves there as `result`. The folder and the compiler processes
/// are cleaned up however the build ends: a failure, or a signal (after
/// which cuvilc ends).
absl::StatusOr<std::string>
buildInTemporaryFolder(const std::string &result,
                       const std::function<absl::Status(const std::string &)> &build) {
  CleanupScope scope;
  const char *tmp = std::getenv("TMPDIR");
  std::string tmpl =
      absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/cuvil-build.XXXXXX");
  if (!::mkdtemp(tmpl.data()))
    return absl::InternalError(absl::StrCat("cannot create a build directory: ",
                                            std::strerror(errno)));
  std::string dir = tmpl;
  struct Cleanup {
    std::string dir;
    bool keep = false;
    ~Cleanup() {
      if (!keep)
        removeDir(dir);
    }
  } cleanup{dir};
  absl::Status status = build(dir);
  const char *keep = std::getenv("CUVIL_KEEP_BUILD_DIR");
  cleanup.keep = !status.ok() && keep && *keep && !pendingInterrupt();
  if (!status.ok())
    return status;
  return readFile(dir + "/" + result);
}

} // namespace

std::string getClangPath() {
  if (const char *env = std::getenv("CUVIL_CLANG"); env && *env)
    return env;
  return "/usr/lib/llvm-22/bin/clang";
}

absl::StatusOr<std::string> buildSharedObject(const EmittedModel &model,
                                              const CpuTarget &cpu,
                                              llvm::StringRef symbolPrefix) {
  return buildInTemporaryFolder("model.so", [&](const std::string &dir) {
    RETURN_IF_ERROR(compileObjects(dir, model, cpu));
    return linkSharedObject(dir, cpu, symbolPrefix);
  });
}

absl::StatusOr<std::string> buildStaticLibrary(const EmittedModel &model,
                                               const CpuTarget &cpu,
                                               llvm::StringRef symbolPrefix) {
  return buildInTemporaryFolder("model.a", [&](const std::string &dir) {
    RETURN_IF_ERROR(compileObjects(dir, model, cpu));
    return archiveStaticLibrary(dir, symbolPrefix);
  });
}

} // namespace cuvil::cpu
