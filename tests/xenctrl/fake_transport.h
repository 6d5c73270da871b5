// The library's transport faked for the unit tests of tools/libxc and tools/libxenguest: dom0's
// relay buffers as a map of byte vectors at made-up dom0 addresses, the frames FOREIGN_WRITE
// fills kept by frame number, and each hypercall answered by the test (`answer`), which reads
// and writes its arguments in those buffers through `object`.
#pragma once
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tools/libxc/xc_private.h"

namespace pvhv::xc::testing {

struct FakeTransport : Transport {
  std::map<uint64_t, std::vector<uint8_t>> buffers;
  uint64_t next = 0xffffffffb4000000ull;
  std::map<uint64_t, std::vector<uint8_t>> written_frames;  // frame -> bytes, by FOREIGN_WRITE
  std::vector<uint32_t> numbers;                            // every hypercall made, in order
  std::string name = "fake";

  virtual int64_t answer(uint32_t number, const uint64_t (&args)[5]) = 0;

  int hypercall(uint32_t number, const uint64_t (&args)[5], int64_t& result) override {
    numbers.push_back(number);
    result = answer(number, args);
    return 0;
  }
  int buffer_alloc(uint32_t pages, uint64_t& address) override {
    address = next;
    next += uint64_t(pages) * 4096;
    buffers[address].assign(size_t(pages) * 4096, 0);
    return 0;
  }
  int buffer_free(uint64_t address) override { return buffers.erase(address) ? 0 : (errno = EFAULT, -1); }
  int buffer_write(uint64_t address, const void* data, size_t length) override {
    std::memcpy(at(address, length), data, length);
    return 0;
  }
  int buffer_read(uint64_t address, void* data, size_t length) override {
    std::memcpy(data, at(address, length), length);
    return 0;
  }
  int foreign_read(uint32_t, uint64_t, uint32_t, void*, size_t) override { return errno = EPERM, -1; }
  int foreign_write(uint32_t, uint64_t frame, uint32_t offset, const void* data, size_t length) override {
    auto& bytes = written_frames[frame];
    bytes.resize(4096);
    std::memcpy(bytes.data() + offset, data, length);
    return 0;
  }
  int evtchn_bind_interdomain(uint32_t, uint32_t, uint32_t& port) override { return port = 9, 0; }
  int evtchn_notify(uint32_t) override { return 0; }
  int evtchn_unmask(uint32_t) override { return 0; }
  int evtchn_close(uint32_t) override { return 0; }
  int dom0_shutdown(uint32_t) override { return 0; }
  const std::string& describe() const override { return name; }

  // The bytes at a dom0 address inside one buffer (the test fails if they are outside all).
  uint8_t* at(uint64_t address, size_t length = 1) {
    auto it = buffers.upper_bound(address);
    EXPECT_NE(it, buffers.begin());
    --it;
    EXPECT_LE(address - it->first + length, it->second.size());
    return it->second.data() + (address - it->first);
  }
  template <typename T>
  T& object(uint64_t address) {
    return *reinterpret_cast<T*>(at(address, sizeof(T)));
  }
};

}  // namespace pvhv::xc::testing
