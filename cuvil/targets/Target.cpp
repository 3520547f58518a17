//===- Target.cpp - the target registry -----------------------------------===//

#include "cuvil/targets/Target.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <cassert>

namespace cuvil {

void TargetRegistry::add(std::unique_ptr<TargetBackend> target) {
  assert(!lookup(target->getName()) && "a target of this name exists");
  for (const std::string &triple : target->getTriples()) {
    (void)triple;
    assert(!lookup(triple) && "a target has this triple");
  }
  targets.push_back(std::move(target));
}

const TargetBackend *TargetRegistry::lookup(llvm::StringRef nameOrTriple) const {
  for (const std::unique_ptr<TargetBackend> &target : targets) {
    if (target->getName() == nameOrTriple)
      return target.get();
    for (const std::string &triple : target->getTriples())
      if (triple == nameOrTriple)
        return target.get();
  }
  return nullptr;
}

std::vector<const TargetBackend *> TargetRegistry::list() const {
  std::vector<const TargetBackend *> all;
  for (const std::unique_ptr<TargetBackend> &target : targets)
    all.push_back(target.get());
  return all;
}

std::string TargetRegistry::describeChoices() const {
  std::vector<std::string> choices;
  for (const std::unique_ptr<TargetBackend> &target : targets) {
    std::string choice = target->getName().str();
    std::vector<std::string> triples = target->getTriples();
    if (!triples.empty())
      absl::StrAppend(&choice, " (", absl::StrJoin(triples, ", "), ")");
    choices.push_back(std::move(choice));
  }
  return absl::StrJoin(choices, ", ");
}

} // namespace cuvil
