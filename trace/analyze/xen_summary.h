// Prints the XenModel the way xenalyze --summary does (same sections, same number formats),
// so the two can be compared line by line.
#pragma once
#include <cstdio>

#include "trace/analyze/cpu_hz.h"
#include "trace/analyze/xen_model.h"

namespace trace {

void print_xen_summary(std::FILE* out, const XenModel& model, const CpuHz& hz);
void print_pcpu_report(std::FILE* out, const XenModel& model, const CpuHz& hz);

}  // namespace trace
