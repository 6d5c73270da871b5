#pragma once
// The Xen public headers use the fixed-width integer types without including <stdint.h>
// themselves, so the hypervisor reaches them through this one header.
#include <stdint.h>
#include <stddef.h>
#include <xen/xen.h>
#include <xen/errno.h>
