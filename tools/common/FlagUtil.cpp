//===- FlagUtil.cpp - command-line helpers shared by the tools ------------===//

#include "tools/common/FlagUtil.h"

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include <algorithm>
#include <cstring>
#include <iostream>

namespace cuvil {

std::vector<char *> normalizeFlagSpelling(int argc, char **argv,
                                          std::vector<std::string> &storage) {
  storage.assign(argv, argv + argc);
  std::vector<char *> args;
  for (std::string &arg : storage) {
    if (arg.rfind("--", 0) == 0 && arg != "--") {
      size_t end = std::min(arg.find('='), arg.size());
      std::replace(arg.begin() + 2, arg.begin() + end, '-', '_');
    }
    args.push_back(arg.data());
  }
  return args;
}

bool wantsHelp(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-help") ||
        !std::strcmp(argv[i], "-h"))
      return true;
  return false;
}

void printFlagsHelp(absl::string_view usage, absl::string_view flagFileFilter) {
  std::cout << usage << "\n\nFlags:\n";
  std::vector<absl::CommandLineFlag *> flags;
  for (auto &[name, flag] : absl::GetAllFlags())
    if (flag->Filename().find(std::string(flagFileFilter)) != std::string::npos)
      flags.push_back(flag);
  std::sort(flags.begin(), flags.end(), [](auto *a, auto *b) { return a->Name() < b->Name(); });
  for (absl::CommandLineFlag *flag : flags) {
    std::string name(flag->Name());
    std::replace(name.begin(), name.end(), '_', '-');
    std::cout << "  " << (name.size() == 1 ? "-" : "--") << name;
    if (!flag->IsOfType<bool>())
      std::cout << "=VALUE";
    std::string line = "     ";
    for (absl::string_view word : absl::StrSplit(flag->Help(), ' ')) {
      if (line.size() + 1 + word.size() > 80) {
        std::cout << "\n" << line;
        line = "     ";
      }
      absl::StrAppend(&line, " ", word);
    }
    std::cout << "\n" << line << "\n      (default: " << flag->DefaultValue() << ")\n";
  }
}

} // namespace cuvil
