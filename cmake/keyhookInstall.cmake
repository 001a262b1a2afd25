# Install rules: headers, an exported CMake package with an optional `crypto`
# component, an arch-independent version file, and pkg-config files.
set(KEYHOOK_CMAKE_DIR "${CMAKE_INSTALL_DATADIR}/cmake/keyhook")
set(KEYHOOK_PKGCONFIG_DIR "${CMAKE_INSTALL_DATADIR}/pkgconfig")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/keyhook" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(TARGETS keyhook keyhook_compiled EXPORT keyhookTargets)
install(EXPORT keyhookTargets NAMESPACE keyhook:: DESTINATION "${KEYHOOK_CMAKE_DIR}")
if(KEYHOOK_HAS_CRYPTO)
    install(TARGETS keyhook_crypto keyhook_crypto_compiled EXPORT keyhookCryptoTargets)
    install(EXPORT keyhookCryptoTargets NAMESPACE keyhook:: DESTINATION "${KEYHOOK_CMAKE_DIR}")
endif()

configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/keyhookConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/keyhookConfig.cmake"
    INSTALL_DESTINATION "${KEYHOOK_CMAKE_DIR}")
write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/keyhookConfigVersion.cmake"
    COMPATIBILITY SameMinorVersion
    ARCH_INDEPENDENT)
install(FILES
    "${PROJECT_BINARY_DIR}/keyhookConfig.cmake"
    "${PROJECT_BINARY_DIR}/keyhookConfigVersion.cmake"
    DESTINATION "${KEYHOOK_CMAKE_DIR}")

configure_file("${PROJECT_SOURCE_DIR}/cmake/keyhook.pc.in" "${PROJECT_BINARY_DIR}/keyhook.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/keyhook.pc" DESTINATION "${KEYHOOK_PKGCONFIG_DIR}")
if(KEYHOOK_HAS_CRYPTO)
    configure_file("${PROJECT_SOURCE_DIR}/cmake/keyhook-crypto.pc.in" "${PROJECT_BINARY_DIR}/keyhook-crypto.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/keyhook-crypto.pc" DESTINATION "${KEYHOOK_PKGCONFIG_DIR}")
endif()
