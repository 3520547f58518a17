//===- ArtifactCheck.cpp - is this file a Cuvil model? --------------------===//

#include "cuvil/abi/ArtifactCheck.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuvil::abi {
namespace {

/// The file and its name in errors; every read is bounds-checked.
class Image {
public:
  Image(absl::string_view bytes, absl::string_view name) : bytes_(bytes), name_(name) {}

  uint64_t size() const { return bytes_.size(); }

  /// Whether [offset, offset + length) lies inside the file.
  bool contains(uint64_t offset, uint64_t length) const {
    return offset <= size() && length <= size() - offset;
  }

  /// A T at `offset` (memcpy: ELF structures need not be aligned here).
  template <typename T> T read(uint64_t offset) const {
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  /// The bytes of [offset, offset + length) inside the file (empty past it).
  absl::string_view slice(uint64_t offset, uint64_t length) const {
    if (offset > size())
      return {};
    return bytes_.substr(offset, std::min(length, size() - offset));
  }

  absl::Status error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, " ", what));
  }

  /// "is truncated or corrupt: <what> ends at byte N of an M-byte file ...".
  absl::Status outside(absl::string_view what, uint64_t offset, uint64_t length) const {
    if (length > UINT64_MAX - offset)
      return error(absl::StrCat("is corrupt: ", what, " has offset ", offset, " and size ", length,
                                ", which overflow; rebuild it with cuvilc"));
    return error(absl::StrCat("is truncated or corrupt: ", what, " ends at byte ",
                              offset + length, " of a ", size(),
                              "-byte file; was the upload complete?"));
  }

private:
  absl::string_view bytes_;
  std::string name_;
};

struct Section {
  Elf64_Shdr header;
  std::string name;
};

absl::Status checkIdent(const Image &image) {
  static const char kMagic[] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3};
  if (image.size() == 0)
    return image.error("is empty; was the upload complete?");
  uint64_t magicBytes = std::min<uint64_t>(image.size(), SELFMAG);
  if (image.slice(0, magicBytes) != absl::string_view(kMagic, magicBytes))
    return image.error("is not an ELF shared library (it does not start with \\x7fELF), so not "
                       "a model built by cuvilc");
  if (image.size() < sizeof(Elf64_Ehdr))
    return image.error(absl::StrCat("is truncated: its ", image.size(),
                                    " bytes are shorter than an ELF header; was the upload "
                                    "complete?"));
  auto ident = image.slice(0, EI_NIDENT);
  if (ident[EI_CLASS] == ELFCLASS32)
    return image.error("is a 32-bit ELF file; Cuvil models are 64-bit (ELFCLASS64)");
  if (ident[EI_CLASS] != ELFCLASS64)
    return image.error(absl::StrCat("is corrupt: its ELF class is ", int(ident[EI_CLASS]),
                                    ", not ELFCLASS64"));
  if (ident[EI_DATA] == ELFDATA2MSB)
    return image.error("is big-endian; this machine and Cuvil models are little-endian");
  if (ident[EI_DATA] != ELFDATA2LSB)
    return image.error(absl::StrCat("is corrupt: its ELF data encoding is ", int(ident[EI_DATA]),
                                    ", not little-endian"));
  if (ident[EI_VERSION] != EV_CURRENT)
    return image.error(absl::StrCat("is corrupt: its ELF version is ", int(ident[EI_VERSION])));
  return absl::OkStatus();
}

absl::Status checkHeader(const Image &image, const Elf64_Ehdr &header, uint16_t machine) {
  switch (header.e_type) {
  case ET_DYN:
    break;
  case ET_EXEC:
    return image.error("is an executable, not a shared library: build the model with cuvilc");
  case ET_REL:
    return image.error("is an object file (.o), not a shared library: link it, or build the "
                       "model with cuvilc");
  case ET_CORE:
    return image.error("is a core dump, not a shared library");
  default:
    return image.error(absl::StrCat("is not a shared library (ELF type ", header.e_type, ")"));
  }
  if (header.e_machine != machine && machine == hostMachine())
    return image.error(absl::StrCat("was built for ", machineName(header.e_machine),
                                    ", this machine is ", machineName(hostMachine()),
                                    ": compile the model with cuvilc for this machine"));
  if (header.e_machine != machine)
    return image.error(absl::StrCat("was built for ", machineName(header.e_machine), ", not ",
                                    machineName(machine)));
  if (header.e_version != EV_CURRENT)
    return image.error(absl::StrCat("is corrupt: its ELF version is ", header.e_version));
  if (header.e_phentsize != sizeof(Elf64_Phdr))
    return image.error(absl::StrCat("is corrupt: its program header entries are ",
                                    header.e_phentsize, " bytes, not ", sizeof(Elf64_Phdr)));
  if (header.e_shoff == 0)
    return image.error("has no section headers (stripped with --strip-sections?), so its "
                       "symbols and Cuvil ABI note cannot be checked; rebuild it with cuvilc");
  if (header.e_shentsize != sizeof(Elf64_Shdr))
    return image.error(absl::StrCat("is corrupt: its section header entries are ",
                                    header.e_shentsize, " bytes, not ", sizeof(Elf64_Shdr)));
  return absl::OkStatus();
}

/// Section 0, which holds the real counts when they do not fit the header.
absl::StatusOr<Elf64_Shdr> sectionZero(const Image &image, const Elf64_Ehdr &header) {
  if (!image.contains(header.e_shoff, sizeof(Elf64_Shdr)))
    return image.outside("the section header table", header.e_shoff, sizeof(Elf64_Shdr));
  return image.read<Elf64_Shdr>(header.e_shoff);
}

/// Every segment's file range inside the file: this is what a loader maps.
absl::Status checkSegments(const Image &image, const Elf64_Ehdr &header) {
  uint64_t count = header.e_phnum;
  if (count == PN_XNUM) {
    absl::StatusOr<Elf64_Shdr> zero = sectionZero(image, header);
    if (!zero.ok())
      return zero.status();
    count = zero->sh_info;
  }
  if (count == 0)
    return image.error("has no program headers, so it cannot be loaded: build it with cuvilc");
  if (count > UINT64_MAX / sizeof(Elf64_Phdr))
    return image.error("is corrupt: its program header count overflows");
  if (!image.contains(header.e_phoff, count * sizeof(Elf64_Phdr)))
    return image.outside("the program header table", header.e_phoff,
                         count * sizeof(Elf64_Phdr));
  int loads = 0;
  bool dynamic = false;
  for (uint64_t i = 0; i < count; ++i) {
    auto segment = image.read<Elf64_Phdr>(header.e_phoff + i * sizeof(Elf64_Phdr));
    if (segment.p_type == PT_LOAD) {
      ++loads;
      if (segment.p_filesz > segment.p_memsz)
        return image.error(absl::StrCat("is corrupt: segment ", i, " has ", segment.p_filesz,
                                        " bytes in the file but ", segment.p_memsz,
                                        " in memory"));
    }
    dynamic |= segment.p_type == PT_DYNAMIC;
    if (segment.p_filesz != 0 && !image.contains(segment.p_offset, segment.p_filesz))
      return image.outside(absl::StrCat("segment ", i), segment.p_offset, segment.p_filesz);
  }
  if (loads == 0 || !dynamic)
    return image.error(absl::StrCat("has no ", loads == 0 ? "loadable segment" : "dynamic segment",
                                    ", so it is not a shared library a loader can use"));
  return absl::OkStatus();
}

/// A NUL-terminated string at `offset` of a string table, or nullopt.
std::optional<std::string> tableString(const Image &image, const Elf64_Shdr &table,
                                       uint64_t offset) {
  if (offset >= table.sh_size)
    return std::nullopt;
  absl::string_view rest = image.slice(table.sh_offset + offset, table.sh_size - offset);
  size_t end = rest.find('\0');
  if (end == absl::string_view::npos)
    return std::nullopt;
  return std::string(rest.substr(0, end));
}

/// The section headers with their names, each section's range checked.
absl::StatusOr<std::vector<Section>> readSections(const Image &image, const Elf64_Ehdr &header) {
  uint64_t count = header.e_shnum;
  uint64_t namesIndex = header.e_shstrndx;
  if (count == 0 || namesIndex == SHN_XINDEX) {
    absl::StatusOr<Elf64_Shdr> zero = sectionZero(image, header);
    if (!zero.ok())
      return zero.status();
    if (count == 0)
      count = zero->sh_size;
    if (namesIndex == SHN_XINDEX)
      namesIndex = zero->sh_link;
  }
  if (count > UINT64_MAX / sizeof(Elf64_Shdr))
    return image.error("is corrupt: its section count overflows");
  if (!image.contains(header.e_shoff, count * sizeof(Elf64_Shdr)))
    return image.outside("the section header table", header.e_shoff,
                         count * sizeof(Elf64_Shdr));
  std::vector<Section> sections(count);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Shdr &section = sections[i].header;
    section = image.read<Elf64_Shdr>(header.e_shoff + i * sizeof(Elf64_Shdr));
    if (section.sh_type != SHT_NOBITS && !image.contains(section.sh_offset, section.sh_size))
      return image.outside(absl::StrCat("section ", i), section.sh_offset, section.sh_size);
  }
  if (namesIndex >= count || sections[namesIndex].header.sh_type != SHT_STRTAB)
    return image.error("is corrupt: it has no valid section name table");
  for (Section &section : sections) {
    std::optional<std::string> name =
        tableString(image, sections[namesIndex].header, section.header.sh_name);
    if (!name)
      return image.error("is corrupt: a section name lies outside the section name table");
    section.name = std::move(*name);
  }
  return sections;
}

/// Whether `symbol` is a function the library defines and exports.
bool exportsFunction(const Elf64_Sym &symbol) {
  int binding = ELF64_ST_BIND(symbol.st_info);
  int visibility = ELF64_ST_VISIBILITY(symbol.st_other);
  return ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && symbol.st_shndx != SHN_UNDEF &&
         (binding == STB_GLOBAL || binding == STB_WEAK) &&
         (visibility == STV_DEFAULT || visibility == STV_PROTECTED);
}

absl::Status checkSymbols(const Image &image, const std::vector<Section> &sections) {
  const Section *symbols = nullptr;
  for (const Section &section : sections)
    if (section.header.sh_type == SHT_DYNSYM)
      symbols = &section;
  if (!symbols)
    return image.error("is not a Cuvil model: it has no dynamic symbol table (.dynsym)");
  const Elf64_Shdr &table = symbols->header;
  if (table.sh_entsize != sizeof(Elf64_Sym))
    return image.error(absl::StrCat("is corrupt: its .dynsym entries are ", table.sh_entsize,
                                    " bytes, not ", sizeof(Elf64_Sym)));
  if (table.sh_link >= sections.size() || sections[table.sh_link].header.sh_type != SHT_STRTAB)
    return image.error("is corrupt: its .dynsym names no valid string table");
  const Elf64_Shdr &strings = sections[table.sh_link].header;

  std::array<bool, kAbiFunctions.size()> found{}, defined{};
  for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= table.sh_size;
       offset += sizeof(Elf64_Sym)) {
    auto symbol = image.read<Elf64_Sym>(table.sh_offset + offset);
    std::optional<std::string> name = tableString(image, strings, symbol.st_name);
    if (!name)
      return image.error("is corrupt: a .dynsym name lies outside its string table");
    for (size_t i = 0; i < kAbiFunctions.size(); ++i)
      if (*name == kAbiFunctions[i]) {
        found[i] = true;
        defined[i] = defined[i] || exportsFunction(symbol);
      }
  }
  std::vector<std::string> missing, notFunctions;
  for (size_t i = 0; i < kAbiFunctions.size(); ++i) {
    if (!found[i])
      missing.push_back(kAbiFunctions[i]);
    else if (!defined[i])
      notFunctions.push_back(kAbiFunctions[i]);
  }
  if (missing.size() == kAbiFunctions.size())
    return image.error(absl::StrCat(
        "is not a Cuvil model: it exports none of the C ABI functions (cuvil_model_run, "
        "cuvil_context_run, ...); build the model with cuvilc"));
  if (!missing.empty())
    return image.error(absl::StrCat("is not a Cuvil model: it exports no ",
                                    absl::StrJoin(missing, ", "),
                                    " (built by an incompatible cuvilc? rebuild it)"));
  if (!notFunctions.empty())
    return image.error(absl::StrCat("is not a Cuvil model: ", absl::StrJoin(notFunctions, ", "),
                                    notFunctions.size() == 1 ? " is" : " are",
                                    " not defined as exported functions"));
  return absl::OkStatus();
}

const Section *findSection(const std::vector<Section> &sections, absl::string_view name) {
  for (const Section &section : sections)
    if (section.name == name)
      return &section;
  return nullptr;
}

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// The Cuvil note's descriptor offset in the notes of `header`, laid out with
/// `alignment` (name and descriptor each padded to it, as glibc reads
/// notes), or nullopt when there is none.
absl::StatusOr<std::optional<uint64_t>> findNote(const Image &image, const Elf64_Shdr &header,
                                                 uint64_t alignment) {
  const uint64_t nameBytes = sizeof(kNoteName); // with its NUL
  uint64_t offset = 0;
  while (header.sh_size - offset >= sizeof(Elf64_Nhdr)) {
    uint64_t at = header.sh_offset + offset;
    auto note = image.read<Elf64_Nhdr>(at);
    uint64_t descOffset = alignUp(sizeof(Elf64_Nhdr) + uint64_t{note.n_namesz}, alignment);
    uint64_t end = descOffset + note.n_descsz;
    if (end > header.sh_size - offset)
      return image.error(absl::StrCat("is corrupt: a note in ", kNoteSection,
                                      " runs past the end of its section"));
    if (note.n_namesz == nameBytes && note.n_type == kNoteType &&
        image.slice(at + sizeof(Elf64_Nhdr), nameBytes) ==
            absl::string_view(kNoteName, nameBytes)) {
      if (note.n_descsz != sizeof(uint32_t))
        return image.error(absl::StrCat("has a malformed Cuvil ABI note: its descriptor is ",
                                        note.n_descsz, " bytes, not 4; rebuild it with cuvilc"));
      return std::optional<uint64_t>(at + descOffset);
    }
    // The last note may end unpadded.
    offset += std::min(alignUp(end, alignment), header.sh_size - offset);
  }
  return std::optional<uint64_t>();
}

/// The C ABI version from the Cuvil note.
absl::StatusOr<uint32_t> readNote(const Image &image, const std::vector<Section> &sections) {
  const Section *section = findSection(sections, kNoteSection);
  if (!section)
    return image.error(absl::StrCat("has no Cuvil ABI note (section ", kNoteSection,
                                    "): built by an older cuvilc? Rebuild it"));
  const Elf64_Shdr &header = section->header;
  if (header.sh_type != SHT_NOTE)
    return image.error(absl::StrCat("is corrupt: its ", kNoteSection, " section is not a note"));
  // readelf's rule: 8-byte aligned note sections pad to 8, others to 4. A
  // 4-byte layout in an 8-aligned section is accepted too.
  std::optional<uint64_t> desc;
  for (uint64_t alignment : {header.sh_addralign == 8 ? uint64_t{8} : uint64_t{4}, uint64_t{4}}) {
    absl::StatusOr<std::optional<uint64_t>> found = findNote(image, header, alignment);
    if (found.ok() && *found) {
      desc = *found;
      break;
    }
    if (!found.ok() && alignment == 4)
      return found.status();
  }
  if (!desc)
    return image.error(absl::StrCat("has no Cuvil ABI note (a note named \"Cuvil\" of type 1 in ",
                                    kNoteSection, "): built by an older cuvilc? Rebuild it"));
  absl::string_view bytes = image.slice(*desc, sizeof(uint32_t));
  uint32_t version = 0;
  for (int i = 3; i >= 0; --i)
    version = version << 8 | static_cast<uint8_t>(bytes[i]);
  return version;
}

absl::StatusOr<std::string> readMetadata(const Image &image,
                                         const std::vector<Section> &sections) {
  const Section *section = findSection(sections, kMetadataSection);
  if (!section)
    return image.error(absl::StrCat("has no ", kMetadataSection,
                                    " section: built by an older cuvilc? Rebuild it"));
  if (section->header.sh_type == SHT_NOBITS)
    return image.error(absl::StrCat("is corrupt: its ", kMetadataSection, " section is empty"));
  absl::string_view text = image.slice(section->header.sh_offset, section->header.sh_size);
  size_t end = text.find('\0');
  if (end == absl::string_view::npos)
    return image.error(
        absl::StrCat("is corrupt: its ", kMetadataSection, " section is not NUL-terminated"));
  return std::string(text.substr(0, end));
}

} // namespace

uint16_t hostMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
#error "Cuvil models are built for x86-64 and aarch64"
#endif
}

uint16_t machineNamed(absl::string_view name) {
  for (uint16_t machine : {EM_X86_64, EM_AARCH64})
    if (name == machineName(machine))
      return machine;
  return 0;
}

std::string machineName(uint16_t machine) {
  switch (machine) {
  case EM_X86_64: return "x86-64";
  case EM_AARCH64: return "aarch64";
  case EM_386: return "32-bit x86";
  case EM_ARM: return "32-bit arm";
  case EM_RISCV: return "riscv";
  case EM_PPC64: return "ppc64";
  case EM_S390: return "s390";
  case EM_MIPS: return "mips";
  case EM_LOONGARCH: return "loongarch";
  default: return absl::StrCat("ELF machine ", machine);
  }
}

absl::StatusOr<ArtifactInfo> checkArtifact(absl::string_view bytes, absl::string_view displayName,
                                           uint16_t machine) {
  Image image(bytes, displayName);
  if (absl::Status status = checkIdent(image); !status.ok())
    return status;
  auto header = image.read<Elf64_Ehdr>(0);
  if (absl::Status status = checkHeader(image, header, machine); !status.ok())
    return status;
  if (absl::Status status = checkSegments(image, header); !status.ok())
    return status;
  absl::StatusOr<std::vector<Section>> sections = readSections(image, header);
  if (!sections.ok())
    return sections.status();
  if (absl::Status status = checkSymbols(image, *sections); !status.ok())
    return status;
  absl::StatusOr<uint32_t> version = readNote(image, *sections);
  if (!version.ok())
    return version.status();
  if (*version != kCAbiVersion)
    return image.error(absl::StrCat("was built for C ABI version ", *version,
                                    ", this program speaks version ", kCAbiVersion,
                                    ": rebuild it with a matching cuvilc"));
  absl::StatusOr<std::string> metadata = readMetadata(image, *sections);
  if (!metadata.ok())
    return metadata.status();
  ArtifactInfo info;
  info.abiVersion = *version;
  info.metadataJson = *std::move(metadata);
  info.machine = header.e_machine;
  return info;
}

absl::StatusOr<std::string> readFileBytes(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat before;
  if (::fstat(fd, &before) != 0)
    return absl::InternalError(absl::StrCat("cannot stat ", path, ": ", std::strerror(errno)));
  if (!S_ISREG(before.st_mode))
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  std::string bytes;
  bytes.reserve(static_cast<size_t>(before.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return absl::InternalError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    if (got == 0)
      break;
    bytes.append(buffer, static_cast<size_t>(got));
  }
  struct stat after;
  if (::fstat(fd, &after) != 0 || after.st_size != before.st_size ||
      after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
      after.st_mtim.tv_nsec != before.st_mtim.tv_nsec ||
      bytes.size() != static_cast<uint64_t>(before.st_size))
    return absl::UnavailableError(
        absl::StrCat(path, " changed while it was being read (is it still being written?); "
                           "write it elsewhere and rename it into place"));
  return bytes;
}

absl::StatusOr<ArtifactInfo> checkArtifactFile(const std::string &path) {
  absl::StatusOr<std::string> bytes = readFileBytes(path);
  if (!bytes.ok())
    return bytes.status();
  return checkArtifact(*bytes, path);
}

} // namespace cuvil::abi
