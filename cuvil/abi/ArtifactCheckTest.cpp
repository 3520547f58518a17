//===- ArtifactCheckTest.cpp - checking artifacts before dlopen -----------===//
//
// The test builds its ELF files with the system C compiler: a stand-in
// Cuvil model (the ten ABI functions, the ABI note, the metadata section)
// and variants lacking each part; then mutates the good one: every prefix
// (truncation), flipped header fields, huge offsets, random bytes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/abi/ArtifactCheck.h"
#include "cuvil/abi/Sha256.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <elf.h>
#include <unistd.h>

namespace cuvil::abi {
namespace {

using ::testing::HasSubstr;

struct Variant {
  bool note = true;
  uint32_t noteVersion = kCAbiVersion;
  /// Note section alignment (its layout pads to it).
  int noteAlignment = 4;
  bool metadata = true;
  /// ABI functions left out.
  std::vector<std::string> without;
  /// ABI functions referenced but not defined.
  std::vector<std::string> undefined;
};

std::string tmpDir() {
  const char *dir = std::getenv("TEST_TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// C source of a library with the parts `variant` asks for.
std::string source(const Variant &variant) {
  std::string c;
  if (variant.metadata)
    c += "__attribute__((section(\".cuvil.metadata\"), used)) static const char metadata[] = "
         "\"{\\\"abi_version\\\": 1, \\\"inputs\\\": []}\";\n";
  else
    c += "static const char metadata[] = \"{}\";\n";
  for (const char *name : kAbiFunctions) {
    if (std::count(variant.without.begin(), variant.without.end(), name))
      continue;
    if (std::count(variant.undefined.begin(), variant.undefined.end(), name)) {
      c += absl::StrCat("extern int ", name, "(void);\nint use_", name, "(void) { return ", name,
                        "(); }\n");
      continue;
    }
    if (std::string(name) == "cuvil_model_metadata")
      c += "const char *cuvil_model_metadata(void) { return metadata; }\n";
    else
      c += absl::StrCat("int ", name, "(void) { return 0; }\n");
  }
  if (variant.note) {
    int pad = variant.noteAlignment;
    c += absl::StrCat("__asm__(\".pushsection .note.cuvil,\\\"a\\\",%note\\n.balign ", pad,
                      "\\n.long 6\\n.long 4\\n.long 1\\n.asciz \\\"Cuvil\\\"\\n.balign ", pad,
                      "\\n.long ", variant.noteVersion, "\\n.balign ", pad,
                      "\\n.popsection\\n\");\n");
  }
  return c;
}

/// Compiles `c` with `command` ("cc -shared -fPIC ..."), returns the file.
std::string build(const std::string &name, const std::string &c, const std::string &command) {
  std::string base = absl::StrCat(tmpDir(), "/", name);
  std::ofstream(base + ".c") << c;
  std::string line = absl::StrCat(command, " -o ", base, ".out ", base, ".c 2>", base, ".log");
  if (std::system(line.c_str()) != 0)
    return "";
  return base + ".out";
}

std::string buildLibrary(const std::string &name, const Variant &variant) {
  std::string path = build(name, source(variant), "cc -shared -fPIC");
  EXPECT_FALSE(path.empty()) << "cc could not build " << name;
  return readAll(path);
}

/// The good stand-in model, built once.
const std::string &good() {
  static const std::string bytes = buildLibrary("good", Variant());
  return bytes;
}

template <typename T> T at(const std::string &bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

template <typename T> void put(std::string &bytes, uint64_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

Elf64_Ehdr header(const std::string &bytes) { return at<Elf64_Ehdr>(bytes, 0); }

/// Offset of the header of section `name` (it must exist).
uint64_t sectionHeaderOffset(const std::string &bytes, const std::string &name) {
  Elf64_Ehdr h = header(bytes);
  auto names = at<Elf64_Shdr>(bytes, h.e_shoff + h.e_shstrndx * sizeof(Elf64_Shdr));
  for (int i = 0; i < h.e_shnum; ++i) {
    uint64_t offset = h.e_shoff + i * sizeof(Elf64_Shdr);
    auto section = at<Elf64_Shdr>(bytes, offset);
    if (name == bytes.c_str() + names.sh_offset + section.sh_name)
      return offset;
  }
  ADD_FAILURE() << "no section " << name;
  return 0;
}

uint64_t sectionOffset(const std::string &bytes, const std::string &name) {
  return at<Elf64_Shdr>(bytes, sectionHeaderOffset(bytes, name)).sh_offset;
}

std::string checkError(absl::string_view bytes) {
  absl::StatusOr<ArtifactInfo> info = checkArtifact(bytes, "model.so");
  if (info.ok())
    return "OK";
  EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument) << info.status();
  EXPECT_EQ(info.status().message().rfind("model.so ", 0), 0u) << info.status();
  return std::string(info.status().message());
}

TEST(ArtifactCheck, AcceptsAModelAndReadsItsNoteAndMetadata) {
  ASSERT_FALSE(good().empty());
  absl::StatusOr<ArtifactInfo> info = checkArtifact(good(), "model.so");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->abiVersion, 1u);
  EXPECT_EQ(info->metadataJson, "{\"abi_version\": 1, \"inputs\": []}");
  EXPECT_EQ(info->machine, hostMachine());
}

TEST(ArtifactCheck, AcceptsANoteLaidOutForEightByteAlignment) {
  Variant variant;
  variant.noteAlignment = 8;
  absl::StatusOr<ArtifactInfo> info = checkArtifact(buildLibrary("note8", variant), "model.so");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->abiVersion, 1u);
}

TEST(ArtifactCheck, RefusesLibrariesLackingAPart) {
  Variant noNote;
  noNote.note = false;
  EXPECT_THAT(checkError(buildLibrary("nonote", noNote)),
              HasSubstr("has no Cuvil ABI note (section .note.cuvil): built by an older "
                        "cuvilc? Rebuild it"));
  Variant version2;
  version2.noteVersion = 2;
  EXPECT_THAT(checkError(buildLibrary("v2", version2)),
              HasSubstr("was built for C ABI version 2, this program speaks version 1"));
  Variant noMetadata;
  noMetadata.metadata = false;
  EXPECT_THAT(checkError(buildLibrary("nometa", noMetadata)),
              HasSubstr("has no .cuvil.metadata section"));
  Variant noRun;
  noRun.without = {"cuvil_context_run"};
  EXPECT_THAT(checkError(buildLibrary("norun", noRun)),
              HasSubstr("is not a Cuvil model: it exports no cuvil_context_run ("));
  Variant twoMissing;
  twoMissing.without = {"cuvil_model_run", "cuvil_context_destroy"};
  EXPECT_THAT(checkError(buildLibrary("twomissing", twoMissing)),
              HasSubstr("it exports no cuvil_model_run, cuvil_context_destroy"));
  Variant undefined;
  undefined.undefined = {"cuvil_context_create"};
  EXPECT_THAT(checkError(buildLibrary("undefined", undefined)),
              HasSubstr("cuvil_context_create is not defined as exported functions"));
  std::string foreign = build("foreign", "int answer(void) { return 42; }\n", "cc -shared -fPIC");
  ASSERT_FALSE(foreign.empty());
  EXPECT_THAT(checkError(readAll(foreign)),
              HasSubstr("is not a Cuvil model: it exports none of the C ABI functions"));
}

TEST(ArtifactCheck, HiddenFunctionsAreNotExported) {
  std::string c = absl::StrReplaceAll(source(Variant()),
                                      {{"int cuvil_context_run(void)",
                                        "__attribute__((visibility(\"hidden\"))) int "
                                        "cuvil_context_run(void)"}});
  std::string path = build("hidden", c, "cc -shared -fPIC");
  ASSERT_FALSE(path.empty());
  EXPECT_THAT(checkError(readAll(path)), HasSubstr("it exports no cuvil_context_run"));
}

TEST(ArtifactCheck, RefusesOtherKindsOfElfFile) {
  std::string c = source(Variant()) + "int main(void) { return 0; }\n";
  std::string executable = build("exe", c, "cc -no-pie");
  ASSERT_FALSE(executable.empty());
  EXPECT_THAT(checkError(readAll(executable)), HasSubstr("is an executable, not a shared library"));
  std::string object = build("obj", c, "cc -c -fPIC");
  ASSERT_FALSE(object.empty());
  EXPECT_THAT(checkError(readAll(object)), HasSubstr("is an object file (.o)"));
  EXPECT_THAT(checkError(""), HasSubstr("is empty; was the upload complete?"));
  EXPECT_THAT(checkError("#!/bin/sh\nrm -rf /\n"), HasSubstr("is not an ELF shared library"));
  EXPECT_THAT(checkError("\x7f" "EL"), HasSubstr("is truncated: its 3 bytes are shorter"));
}

TEST(ArtifactCheck, RefusesAnotherMachine) {
  // Built for the other machine by clang (no libc needed with -nostdlib).
  const char *target = hostMachine() == EM_X86_64 ? "aarch64-linux-gnu" : "x86_64-linux-gnu";
  std::string path;
  for (const char *clang : {"/usr/lib/llvm-22/bin/clang", "clang"}) {
    path = build("cross", source(Variant()),
                 absl::StrCat(clang, " --target=", target,
                              " -shared -fPIC -nostdlib -fuse-ld=lld"));
    if (!path.empty())
      break;
  }
  ASSERT_FALSE(path.empty()) << "clang could not cross-build for " << target;
  std::string expected = hostMachine() == EM_X86_64
                             ? "was built for aarch64, this machine is x86-64"
                             : "was built for x86-64, this machine is aarch64";
  EXPECT_THAT(checkError(readAll(path)), HasSubstr(expected));
  std::string riscv = good();
  put<uint16_t>(riscv, offsetof(Elf64_Ehdr, e_machine), EM_RISCV);
  EXPECT_THAT(checkError(riscv), HasSubstr("was built for riscv, this machine is"));
}

TEST(ArtifactCheck, EveryPrefixIsRefusedAndNamedTruncated) {
  const std::string &bytes = good();
  ASSERT_FALSE(bytes.empty());
  // The section headers end the file, so no proper prefix is a whole model.
  int truncatedSegments = 0;
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::string error = checkError(absl::string_view(bytes).substr(0, length));
    ASSERT_NE(error, "OK") << "a " << length << "-byte prefix passed";
    if (length >= 1) {
      ASSERT_TRUE(error.find("truncated") != std::string::npos) << length << ": " << error;
    }
    truncatedSegments += error.find("segment") != std::string::npos;
  }
  EXPECT_GT(truncatedSegments, 0);
  std::string error = checkError(absl::string_view(bytes).substr(0, bytes.size() / 2));
  EXPECT_THAT(error, HasSubstr(absl::StrCat("of a ", bytes.size() / 2,
                                            "-byte file; was the upload complete?")));
}

TEST(ArtifactCheck, RefusesFlippedHeaderFields) {
  const std::string &bytes = good();
  Elf64_Ehdr h = header(bytes);
  auto mutated = [&](auto change) {
    std::string copy = bytes;
    change(copy);
    return checkError(copy);
  };
  EXPECT_THAT(mutated([](std::string &b) { b[EI_CLASS] = ELFCLASS32; }),
              HasSubstr("is a 32-bit ELF file"));
  EXPECT_THAT(mutated([](std::string &b) { b[EI_CLASS] = 7; }), HasSubstr("ELF class is 7"));
  EXPECT_THAT(mutated([](std::string &b) { b[EI_DATA] = ELFDATA2MSB; }),
              HasSubstr("is big-endian"));
  EXPECT_THAT(mutated([](std::string &b) { b[EI_VERSION] = 9; }), HasSubstr("ELF version is 9"));
  EXPECT_THAT(mutated([](std::string &b) { put<uint16_t>(b, offsetof(Elf64_Ehdr, e_type), ET_CORE); }),
              HasSubstr("is a core dump"));
  EXPECT_THAT(mutated([](std::string &b) { put<uint16_t>(b, offsetof(Elf64_Ehdr, e_phentsize), 32); }),
              HasSubstr("program header entries are 32 bytes"));
  EXPECT_THAT(mutated([](std::string &b) { put<uint16_t>(b, offsetof(Elf64_Ehdr, e_shentsize), 40); }),
              HasSubstr("section header entries are 40 bytes"));
  EXPECT_THAT(mutated([](std::string &b) { put<uint64_t>(b, offsetof(Elf64_Ehdr, e_shoff), 0); }),
              HasSubstr("has no section headers"));
  EXPECT_THAT(mutated([](std::string &b) { put<uint16_t>(b, offsetof(Elf64_Ehdr, e_phnum), 0); }),
              HasSubstr("has no program headers"));
  // Huge offsets and counts: overflow, not a wild read.
  EXPECT_THAT(mutated([](std::string &b) {
                put<uint64_t>(b, offsetof(Elf64_Ehdr, e_phoff), ~uint64_t{0} - 8);
              }),
              HasSubstr("the program header table has offset"));
  EXPECT_THAT(mutated([](std::string &b) {
                put<uint64_t>(b, offsetof(Elf64_Ehdr, e_shoff), uint64_t{1} << 62);
              }),
              HasSubstr("the section header table ends at byte"));
  EXPECT_THAT(mutated([](std::string &b) { put<uint16_t>(b, offsetof(Elf64_Ehdr, e_shnum), 0xffff); }),
              HasSubstr("the section header table ends at byte"));
  EXPECT_THAT(mutated([](std::string &b) { put<uint16_t>(b, offsetof(Elf64_Ehdr, e_phnum), PN_XNUM); }),
              HasSubstr("has no program headers"));
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint16_t>(b, offsetof(Elf64_Ehdr, e_shstrndx), h.e_shnum + 3);
              }),
              HasSubstr("no valid section name table"));
  // A loadable segment's range.
  int load = -1;
  for (int i = 0; i < h.e_phnum && load < 0; ++i)
    if (at<Elf64_Phdr>(bytes, h.e_phoff + i * sizeof(Elf64_Phdr)).p_type == PT_LOAD)
      load = i;
  ASSERT_GE(load, 0);
  uint64_t phdr = h.e_phoff + load * sizeof(Elf64_Phdr);
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint64_t>(b, phdr + offsetof(Elf64_Phdr, p_offset), ~uint64_t{0});
              }),
              HasSubstr(absl::StrCat("segment ", load, " has offset")));
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint64_t>(b, phdr + offsetof(Elf64_Phdr, p_filesz), uint64_t{1} << 40);
                put<uint64_t>(b, phdr + offsetof(Elf64_Phdr, p_memsz), uint64_t{1} << 41);
              }),
              HasSubstr(absl::StrCat("segment ", load, " ends at byte")));
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint64_t>(b, phdr + offsetof(Elf64_Phdr, p_memsz), 0);
              }),
              HasSubstr("bytes in the file but 0 in memory"));
  // Sections: the dynamic symbol table, its strings, the note.
  uint64_t dynsym = sectionHeaderOffset(bytes, ".dynsym");
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint64_t>(b, dynsym + offsetof(Elf64_Shdr, sh_size), uint64_t{1} << 50);
              }),
              HasSubstr("is truncated or corrupt: section"));
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint64_t>(b, dynsym + offsetof(Elf64_Shdr, sh_entsize), 16);
              }),
              HasSubstr(".dynsym entries are 16 bytes"));
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint32_t>(b, dynsym + offsetof(Elf64_Shdr, sh_link), 0xfff0);
              }),
              HasSubstr("names no valid string table"));
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint32_t>(b, dynsym + offsetof(Elf64_Shdr, sh_type), SHT_PROGBITS);
              }),
              HasSubstr("has no dynamic symbol table"));
  uint64_t dynstr = sectionHeaderOffset(bytes, ".dynstr");
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint64_t>(b, dynstr + offsetof(Elf64_Shdr, sh_size), 1);
              }),
              HasSubstr("a .dynsym name lies outside its string table"));
  uint64_t note = sectionOffset(bytes, ".note.cuvil");
  EXPECT_THAT(mutated([&](std::string &b) { put<uint32_t>(b, note + 16, 0x03020100); }),
              HasSubstr("has no Cuvil ABI note (a note named \"Cuvil\""));
  EXPECT_THAT(mutated([&](std::string &b) { put<uint32_t>(b, note + 4, 8); }),
              HasSubstr("runs past the end of its section"));
  EXPECT_THAT(mutated([&](std::string &b) { put<uint32_t>(b, note + 4, 2); }),
              HasSubstr("its descriptor is 2 bytes, not 4"));
  EXPECT_THAT(mutated([&](std::string &b) { put<uint32_t>(b, note + 20, 7); }),
              HasSubstr("was built for C ABI version 7"));
  EXPECT_THAT(mutated([&](std::string &b) {
                put<uint32_t>(b, sectionHeaderOffset(b, ".note.cuvil") + offsetof(Elf64_Shdr, sh_type),
                              SHT_PROGBITS);
              }),
              HasSubstr("section is not a note"));
  uint64_t metadataHeader = sectionHeaderOffset(bytes, ".cuvil.metadata");
  auto metadata = at<Elf64_Shdr>(bytes, metadataHeader);
  EXPECT_THAT(mutated([&](std::string &b) {
                b[metadata.sh_offset + metadata.sh_size - 1] = 'x';
              }),
              HasSubstr("section is not NUL-terminated"));
}

TEST(ArtifactCheck, RandomMutationsNeverCrash) {
  const std::string &bytes = good();
  Elf64_Ehdr h = header(bytes);
  // Where mutations matter: the ELF header, the program and section header
  // tables, the dynamic symbols and the note; and anywhere.
  std::vector<std::pair<uint64_t, uint64_t>> regions = {
      {0, sizeof(Elf64_Ehdr)},
      {h.e_phoff, h.e_phnum * sizeof(Elf64_Phdr)},
      {h.e_shoff, h.e_shnum * sizeof(Elf64_Shdr)},
      {sectionOffset(bytes, ".dynsym"), 10 * sizeof(Elf64_Sym)},
      {sectionOffset(bytes, ".note.cuvil"), 24},
      {0, bytes.size()}};
  std::mt19937_64 random(20261201);
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string copy = bytes;
    int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      auto [start, length] = regions[random() % regions.size()];
      uint64_t offset = start + random() % length;
      switch (random() % 4) {
      case 0: copy[offset] = static_cast<char>(random()); break;
      case 1: copy[offset] ^= static_cast<char>(1 << (random() % 8)); break;
      case 2: // a large value where an offset or size may be
        if (offset + 8 <= copy.size())
          put<uint64_t>(copy, offset, random() >> (random() % 64));
        break;
      case 3: copy.resize(random() % copy.size()); break;
      }
      if (copy.empty())
        break;
    }
    absl::StatusOr<ArtifactInfo> info = checkArtifact(copy, "fuzz.so");
    if (info.ok())
      ++accepted;
    else
      ASSERT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument) << info.status();
  }
  // Some mutations hit bytes nothing checks (code, padding): accepted.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 20000);
}

TEST(ArtifactCheck, ReadsFilesWhole) {
  std::string path = tmpDir() + "/whole.so";
  std::ofstream(path, std::ios::binary) << good();
  absl::StatusOr<ArtifactInfo> info = checkArtifactFile(path);
  ASSERT_TRUE(info.ok()) << info.status();
  absl::StatusOr<std::string> bytes = readFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, good());
  EXPECT_EQ(readFileBytes(tmpDir() + "/absent.so").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(readFileBytes(tmpDir()).status().message()),
              HasSubstr("is not a regular file"));
  std::ofstream(path, std::ios::binary) << good().substr(0, 1000);
  EXPECT_THAT(std::string(checkArtifactFile(path).status().message()),
              HasSubstr(path + " is truncated"));
}

TEST(Sha256, MatchesKnownDigests) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Lengths around the padding boundary (55, 56, 64 bytes) and a long input.
  EXPECT_EQ(sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

} // namespace
} // namespace cuvil::abi
