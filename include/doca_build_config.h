/*
 * softdoca — the build personality of a DOCA program: this one is the host
 * side. DOCA generates this file per install; a BlueField (DPU) install
 * defines DOCA_ARCH_DPU here, and programs pick their role with
 * #ifdef DOCA_ARCH_DPU. softdoca installs both personalities: this file in
 * the include directory, the DPU one in its doca-dpu/ subdirectory, which the
 * pkg-config files of <libdir>/pkgconfig-dpu put first on the include path
 * (README "The BlueField side").
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

/* The host side: DOCA_ARCH_HOST, and DOCA_ARCH_DPU deliberately not
 * defined (NVIDIA's dma_copy_host sample refuses to run without
 * DOCA_ARCH_HOST, dma_copy_dpu without DOCA_ARCH_DPU). */
#define DOCA_ARCH_HOST 1

#endif /* DOCA_BUILD_CONFIG_H_ */
