# Install rules and the Debian package: `cmake --build build --target package` (or `cpack` in the
# build directory) writes build/tpu-doctor_VERSION_ARCH.deb with the CLI, its bash completion and,
# when the module is built, the tpudoctor Python package for Debian's python3. dpkg-shlibdeps
# (dpkg-dev, part of build-essential) turns the libraries the binaries link into Depends.

install(TARGETS tpu-doctor RUNTIME DESTINATION bin)

set(TPUD_BASH_COMPLETION ${CMAKE_BINARY_DIR}/completion/tpu-doctor)
add_custom_command(OUTPUT ${TPUD_BASH_COMPLETION}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/completion
                   COMMAND tpu-doctor completion bash > ${TPUD_BASH_COMPLETION}
                   DEPENDS tpu-doctor VERBATIM)
add_custom_target(tpudoctor_completion ALL DEPENDS ${TPUD_BASH_COMPLETION})
install(FILES ${TPUD_BASH_COMPLETION} DESTINATION share/bash-completion/completions)
install(FILES README.md DESTINATION share/doc/tpu-doctor)

# libzip is loaded when an archive is read, not linked (CMakeLists.txt), so dpkg-shlibdeps does not
# see it: its package (named after its soname, libzip.so.4 -> libzip4) is listed here.
string(REGEX REPLACE "^lib(.+)\\.so\\.([0-9]+)$" "lib\\1\\2" TPUD_LIBZIP_PACKAGE
                     "${TPUD_LIBZIP_SONAME}")
set(TPUD_DEB_DEPENDS "${TPUD_LIBZIP_PACKAGE}")
if(TARGET tpudoctor_python)
  # Debian's python3 reads /usr/lib/python3/dist-packages; the extension is built for the
  # interpreter CMake found (its minor version is in the module's file name).
  set(TPUD_PY_DEST lib/python3/dist-packages/tpudoctor)
  install(TARGETS tpudoctor_python LIBRARY DESTINATION ${TPUD_PY_DEST})
  install(FILES ${TPUD_PY_SOURCES} DESTINATION ${TPUD_PY_DEST})
  execute_process(COMMAND ${PYTHON_EXECUTABLE} -c
                          "import sys; print(sys.version_info[0], sys.version_info[1], sep=';')"
                  OUTPUT_VARIABLE TPUD_PY_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(GET TPUD_PY_VERSION 0 TPUD_PY_MAJOR)
  list(GET TPUD_PY_VERSION 1 TPUD_PY_MINOR)
  math(EXPR TPUD_PY_NEXT_MINOR "${TPUD_PY_MINOR} + 1")
  string(APPEND TPUD_DEB_DEPENDS
         ", python3 (>= ${TPUD_PY_MAJOR}.${TPUD_PY_MINOR}), python3 (<< ${TPUD_PY_MAJOR}.${TPUD_PY_NEXT_MINOR})")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tpu-doctor)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "tpu-doctor developers <tpu-doctor@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "will this model run on a Cloud TPU, how fast, at what cost, and why did that TPU run die?")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "tpu-doctor reads ONNX, HLO/StableHLO, torch.export, Keras, TensorFlow and model configs\n\
and says whether the model runs on a Cloud TPU, estimates step time, memory and cost per\n\
target, plans the slice, checks job files and training scripts, and reads the logs of a\n\
TPU run that died. No TPU and no ML framework are needed.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${TPUD_DEB_DEPENDS}")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR})
include(CPack)
