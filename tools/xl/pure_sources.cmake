# xl's pure parts: the xl.cfg parser and domain resolution (config/), the output formats, the
# daemon's answers as rows (model) and the option parsing. Unit-tested on the host
# (tests/unit/xl_*_test.cpp) and linked into build/bin/xl.
set(XL_PURE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/config/xl_cfg.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/domain_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/cpu_range.cpp
  ${CMAKE_CURRENT_LIST_DIR}/format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/xenstore_ls.cpp)
list(APPEND PURE_SOURCES ${XL_PURE_SOURCES})
