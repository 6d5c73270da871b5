// Everything the tools compute from one trace file, computed once.
#pragma once
#include <optional>
#include <string>

#include "trace/analyze/cpu_hz.h"
#include "trace/analyze/forks.h"
#include "trace/analyze/pvmmu_stats.h"
#include "trace/analyze/xen_model.h"

namespace trace {

struct Analysis {
  std::string path;
  TraceFile file;
  std::vector<Step> steps;
  XenModel model;
  PvmmuStats stats;
  ForkStories forks;
  CpuHz hz;
};

std::unique_ptr<Analysis> analyse(const std::string& path, TraceFile file, std::optional<uint64_t> cpu_hz);

}  // namespace trace
