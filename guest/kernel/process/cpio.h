#pragma once
// Reader for "newc" cpio archives (the initrd format): a 110-byte ASCII header, the NUL-
// terminated name, then the file data, each padded to 4 bytes; "TRAILER!!!" ends it.
// Every length is checked against the archive size: a corrupt or truncated archive yields
// an error, never an out-of-bounds read.
#include <stddef.h>
#include <stdint.h>

namespace lib {

enum class CpioStatus {
  ok,
  end,  // the trailer was reached
  not_found,
  truncated,  // a header, name or data runs past the end of the archive
  bad_magic,
  bad_field,  // a header field is not 8 hex digits
  bad_name,   // name size 0 or the name is not NUL-terminated
};

const char* cpio_status_name(CpioStatus status);

struct CpioEntry {
  const char* name;  // NUL-terminated, inside the archive
  uint32_t mode;
  const uint8_t* data;
  size_t size;
};

class CpioReader {
 public:
  CpioReader(const void* archive, size_t size) : base_(static_cast<const uint8_t*>(archive)), size_(size) {}

  // Reads the next entry. Returns ok (entry filled), end, or an error; after an error or the
  // end every further call returns the same status.
  CpioStatus next(CpioEntry& entry);

 private:
  const uint8_t* base_;
  size_t size_;
  size_t offset_ = 0;
  CpioStatus sticky_ = CpioStatus::ok;
};

// Finds a regular file by path; "/init", "init" and "./init" name the same entry.
CpioStatus cpio_find(const void* archive, size_t size, const char* path, CpioEntry& entry);

}  // namespace lib
