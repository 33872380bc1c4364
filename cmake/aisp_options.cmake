# Build options, CUDA architectures and warnings.
option(AISP_BUILD_TESTS "Build the test suites" ON)
set(AISP_CUDA_ARCHS "90a" CACHE STRING "CUDA architectures, ';'-separated (e.g. 90a;100a). Each becomes -gencode=arch=compute_X,code=sm_X")

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
# CMake 3.25 does not know that nvcc 12+ speaks C++20: teach it the flag.
set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()

# Explicit -gencode flags: 'a' targets (sm_90a: wgmma, setmaxnreg) need the arch-specific form.
set(CMAKE_CUDA_ARCHITECTURES OFF)
foreach(arch IN LISTS AISP_CUDA_ARCHS)
  string(APPEND CMAKE_CUDA_FLAGS " -gencode=arch=compute_${arch},code=sm_${arch}")
endforeach()
string(APPEND CMAKE_CUDA_FLAGS " -lineinfo -Xptxas=--warn-on-spills --expt-relaxed-constexpr -Xcompiler=-frecord-gcc-switches")
# Every translation unit records its switches in the binary, so a run can prove that both
# variants of a pair were built alike (K4, src/audit/build_flags.hpp).
string(APPEND CMAKE_CXX_FLAGS " -frecord-gcc-switches")

# K4 per translation unit: scripts/record_math_flags sees each compile command and hands the
# unit its value-changing math switches and pragmas (AISP_TU_MATH_FLAGS); ccache runs after it.
set(AISP_LAUNCHERS ${CMAKE_CURRENT_SOURCE_DIR}/scripts/record_math_flags)
find_program(AISP_CCACHE ccache)
if(AISP_CCACHE)
  list(APPEND AISP_LAUNCHERS ${AISP_CCACHE})
endif()
set(CMAKE_CXX_COMPILER_LAUNCHER ${AISP_LAUNCHERS})
set(CMAKE_CUDA_COMPILER_LAUNCHER ${AISP_LAUNCHERS})

function(aisp_apply_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wconversion -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Werror=all-warnings>)
endfunction()
