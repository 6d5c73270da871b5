# xl's pure parts: the xl.cfg parser and domain resolution (config/). Unit-tested on the host
# (tests/unit/xl_*_test.cpp).
set(XL_PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/config/xl_cfg.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/domain_config.cpp)
list(APPEND PURE_SOURCES ${XL_PURE_SOURCES})
