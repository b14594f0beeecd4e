// Fd: a file descriptor closed when it goes out of scope (reading model files, writing emitted
// ones).
#pragma once

#include <unistd.h>

namespace tpudoctor {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace tpudoctor
