# Finds every library mbstudy builds against. Debian package names are given in each error.
# On a cluster, load the matching environment modules first (see README.md).

find_package(MPI REQUIRED COMPONENTS C)
find_package(OpenMP REQUIRED COMPONENTS C)

# Parallel HDF5 is required: studies gather trajectories with collective writes.
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 COMPONENTS C HL)
if(NOT HDF5_FOUND)
  message(FATAL_ERROR "HDF5 not found: install the parallel build (Debian: libhdf5-openmpi-dev)")
endif()
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "Only a serial HDF5 was found (${HDF5_C_INCLUDE_DIRS}); mbstudy needs "
                      "parallel HDF5 (Debian: libhdf5-openmpi-dev, or an MPI-enabled hdf5 module)")
endif()

find_package(PkgConfig REQUIRED)

# zlib: the result file decides per quantity whether deflate pays
find_package(ZLIB)
if(NOT ZLIB_FOUND)
  message(FATAL_ERROR "zlib not found (Debian: zlib1g-dev)")
endif()

# LAPACKE is a separate library on Debian (OpenBLAS is built without it).
set(BLA_VENDOR OpenBLAS)
find_package(BLAS)
find_package(LAPACK)
if(NOT BLAS_FOUND OR NOT LAPACK_FOUND)
  unset(BLA_VENDOR)
  find_package(BLAS REQUIRED)
  find_package(LAPACK REQUIRED)
endif()
pkg_check_modules(LAPACKE IMPORTED_TARGET lapacke)
if(NOT LAPACKE_FOUND)
  message(FATAL_ERROR "LAPACKE not found (Debian: liblapacke-dev)")
endif()

find_package(SUNDIALS 6.0 COMPONENTS cvodes nvecserial sunmatrixdense sunlinsoldense)
if(NOT SUNDIALS_FOUND)
  message(FATAL_ERROR "SUNDIALS (CVODES) not found (Debian: libsundials-dev)")
endif()

find_package(LibXml2)
if(NOT LibXml2_FOUND)
  message(FATAL_ERROR "libxml2 not found (Debian: libxml2-dev)")
endif()

pkg_check_modules(FYAML IMPORTED_TARGET libfyaml)
if(NOT FYAML_FOUND)
  message(FATAL_ERROR "libfyaml not found (Debian: libfyaml-dev)")
endif()

# cairo draws the posture study's figure (PNG)
pkg_check_modules(CAIRO IMPORTED_TARGET cairo)
if(NOT CAIRO_FOUND)
  message(FATAL_ERROR "cairo not found (Debian: libcairo2-dev)")
endif()

# NLopt: static optimization (the posture study's muscle activations at quiet standing)
pkg_check_modules(NLOPT IMPORTED_TARGET nlopt)
if(NOT NLOPT_FOUND)
  message(FATAL_ERROR "NLopt not found (Debian: libnlopt-dev)")
endif()

find_path(RANDOM123_INCLUDE_DIR Random123/philox.h)
if(NOT RANDOM123_INCLUDE_DIR)
  message(FATAL_ERROR "Random123 headers not found (Debian: librandom123-dev)")
endif()

message(STATUS "mbstudy dependencies: MPI ${MPI_C_VERSION}, HDF5 ${HDF5_VERSION} (parallel), "
               "LAPACKE ${LAPACKE_VERSION}, SUNDIALS ${SUNDIALS_VERSION}, "
               "libxml2 ${LIBXML2_VERSION_STRING}, libfyaml ${FYAML_VERSION}, cairo ${CAIRO_VERSION}, "
               "NLopt ${NLOPT_VERSION}")
