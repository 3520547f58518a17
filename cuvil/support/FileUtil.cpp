#include "cuvil/support/FileUtil.h"

#include "cuvil/support/StatusMacros.h"

#include "absl/strings/str_cat.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuvil {

static absl::Status errnoStatus(int err, absl::string_view what,
                                const std::string &path) {
  std::string message =
      absl::StrCat(what, " '", path, "': ", std::strerror(err));
  switch (err) {
  case ENOENT:
  case ENOTDIR:
    return absl::NotFoundError(message);
  case EACCES:
  case EPERM:
  case EROFS:
    return absl::PermissionDeniedError(message);
  case EISDIR:
    return absl::InvalidArgumentError(message);
  default:
    return absl::InternalError(message);
  }
}

absl::StatusOr<std::string> readFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errnoStatus(errno, "cannot open", path);
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return errnoStatus(err, "cannot read", path);
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return contents;
}

/// Writes `contents` to a new temporary file beside `path`; returns its
/// name.
static absl::StatusOr<std::string> writeTemporary(const std::string &path,
                                                  absl::string_view contents) {
  // O_EXCL with mode 0666 (not mkstemp's 0600) so the artifact gets the
  // user's umask like any other file, without touching the process umask.
  static std::atomic<unsigned> counter{0};
  std::string tmpl;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmpl = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter++);
    fd = ::open(tmpl.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return errnoStatus(errno, "cannot create a file beside", path);
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      return errnoStatus(err, "cannot write", path);
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    return errnoStatus(err, "cannot write", path);
  }
  return tmpl;
}

absl::Status writeFileAtomically(const std::string &path,
                                 absl::string_view contents) {
  return writeFilesAtomically({{path, contents}});
}

absl::Status writeFilesAtomically(
    const std::vector<std::pair<std::string, absl::string_view>> &files) {
  // Every file is complete in a temporary before any replaces its target,
  // so that a failure (a full disk) leaves all the old files as they were.
  std::vector<std::string> temporaries;
  auto removeTemporaries = [&] {
    for (const std::string &tmp : temporaries)
      ::unlink(tmp.c_str());
  };
  for (const auto &[path, contents] : files) {
    absl::StatusOr<std::string> tmp = writeTemporary(path, contents);
    if (!tmp.ok()) {
      removeTemporaries();
      return tmp.status();
    }
    temporaries.push_back(*std::move(tmp));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(temporaries[i].c_str(), files[i].first.c_str()) != 0) {
      int err = errno;
      for (size_t j = i; j < files.size(); ++j)
        ::unlink(temporaries[j].c_str());
      return errnoStatus(err, "cannot write", files[i].first);
    }
  }
  return absl::OkStatus();
}

absl::Status checkOutputPath(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write '", path,
                     "': it is a folder; give a file name inside it"));
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return absl::NotFoundError(absl::StrCat(
        "cannot write '", path, "': the folder '", dir,
        "' does not exist; create it first"));
  if (::access(dir.c_str(), W_OK) != 0)
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot write '", path, "': the folder '", dir, "' is not writable"));
  return absl::OkStatus();
}

namespace {

std::string withoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

/// Whether `dir` is a folder Cuvil may replace: empty, or holding the
/// marker.
absl::Status checkReplaceable(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return absl::OkStatus();
  if (!S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write the folder '", dir, "': a file has that name"));
  if (::access((dir + "/" + kOutputFolderMarker).c_str(), F_OK) == 0)
    return absl::OkStatus();
  DIR *handle = ::opendir(dir.c_str());
  if (!handle)
    return errnoStatus(errno, "cannot read the folder", dir);
  bool empty = true;
  while (struct dirent *entry = ::readdir(handle))
    empty &= std::strcmp(entry->d_name, ".") == 0 ||
             std::strcmp(entry->d_name, "..") == 0;
  ::closedir(handle);
  if (!empty)
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write the folder '", dir, "': it exists and holds files "
        "Cuvil did not write; give a new or empty folder"));
  return absl::OkStatus();
}

int removeEntry(const char *path, const struct stat *, int, struct FTW *) {
  return ::remove(path);
}

void removeTree(const std::string &dir) {
  ::nftw(dir.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
}

/// Makes the folders of `relative` under `root`.
absl::Status makeParents(const std::string &root, const std::string &relative) {
  for (size_t slash = relative.find('/'); slash != std::string::npos;
       slash = relative.find('/', slash + 1)) {
    std::string dir = root + "/" + relative.substr(0, slash);
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
      return errnoStatus(errno, "cannot create the folder", dir);
  }
  return absl::OkStatus();
}

} // namespace

absl::Status checkOutputFolder(const std::string &path) {
  std::string dir = withoutTrailingSlashes(path);
  if (dir.empty())
    return absl::InvalidArgumentError("the output folder has no name");
  RETURN_IF_ERROR(checkReplaceable(dir));
  // The new folder is made beside it, in its parent.
  return checkOutputPath(dir + ".tmp");
}

absl::Status writeFolderAtomically(
    const std::string &path,
    const std::vector<std::pair<std::string, absl::string_view>> &files) {
  std::string dir = withoutTrailingSlashes(path);
  RETURN_IF_ERROR(checkReplaceable(dir));
  std::string tmpl = dir + ".tmp-XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    return errnoStatus(errno, "cannot create a folder beside", dir);
  std::string fresh = tmpl;
  // mkdtemp makes it private; a project folder is for others to read too.
  ::chmod(fresh.c_str(), 0755);
  auto fail = [&](absl::Status status) {
    removeTree(fresh);
    return status;
  };
  std::vector<std::pair<std::string, absl::string_view>> all = files;
  all.push_back({kOutputFolderMarker, "written by Cuvil; the next compile "
                                      "into this folder replaces it\n"});
  for (const auto &[relative, contents] : all) {
    if (relative.empty() || relative[0] == '/' ||
        relative.find("..") != std::string::npos)
      return fail(absl::InternalError(
          absl::StrCat("bad file name in an output folder: ", relative)));
    if (absl::Status status = makeParents(fresh, relative); !status.ok())
      return fail(status);
    if (absl::Status status =
            writeFileAtomically(fresh + "/" + relative, contents);
        !status.ok())
      return fail(status);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (::rename(fresh.c_str(), dir.c_str()) != 0)
      return fail(errnoStatus(errno, "cannot write the folder", dir));
    return absl::OkStatus();
  }
  // Swap: the old folder moves aside, the new one in, the old goes.
  std::string old = dir + ".old-XXXXXX";
  if (!::mkdtemp(old.data()))
    return fail(errnoStatus(errno, "cannot create a folder beside", dir));
  if (::rename(dir.c_str(), old.c_str()) != 0) {
    int err = errno;
    ::rmdir(old.c_str());
    return fail(errnoStatus(err, "cannot replace the folder", dir));
  }
  if (::rename(fresh.c_str(), dir.c_str()) != 0) {
    int err = errno;
    ::rename(old.c_str(), dir.c_str());
    return fail(errnoStatus(err, "cannot write the folder", dir));
  }
  removeTree(old);
  return absl::OkStatus();
}

} // namespace cuvil
