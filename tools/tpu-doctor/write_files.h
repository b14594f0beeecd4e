// WriteFilesTransaction: puts a set of generated files into a user's folder all at once or not at
// all (`plan --emit DIR`).
//
// The folder is the user's: it may hold their own `train.py`, it may be shared with other users,
// and the run may fail or be interrupted. So:
//   - every target is checked before anything is written: an existing file is refused unless
//     `overwrite` is set, and a target that is a folder or anything but a regular file (or a
//     symlink, which a rename replaces without following) is always refused;
//   - each file is first written to a temporary created with O_CREAT|O_EXCL|O_NOFOLLOW under a
//     random name, through a descriptor of the folder (openat), then fsynced: a planted symlink
//     or file at a temporary name is never written through;
//   - the renames happen only once every temporary is written; a file that `overwrite` replaces
//     is first hard-linked to a backup, so a failed rename puts every earlier target back;
//   - without `overwrite` each rename is RENAME_NOREPLACE: a file that appears in the meantime is
//     not clobbered;
//   - the folder is fsynced after the renames; SIGINT/SIGTERM/SIGHUP wait until they are done.
// A folder the call creates is removed again when it fails. What no process can guard against is
// SIGKILL or power loss between two renames: a new folder is therefore filled under a temporary
// name and renamed into place in one step.
#pragma once

#include <string>
#include <vector>

#include "tpudoctor/support/result.h"

namespace tpudoctor::cli {

struct FileToWrite {
  std::string name;  // a plain file name: no '/', not "." or ".."
  std::string text;
  bool executable = false;  // mode 0777 & ~umask instead of 0666 & ~umask
};

// Writes `files` into `dir` (created when missing) as described above. The error names the folder
// and the file and says what was expected; on error the folder is as it was before the call.
Result<Ok> WriteFilesTransaction(const std::string& dir, const std::vector<FileToWrite>& files,
                                 bool overwrite);

}  // namespace tpudoctor::cli
