/*
 * softdoca — the build personality of a DOCA program: this one is the
 * BlueField (DPU) side. Found before the host one of the parent directory
 * when building with the pkg-config files of <libdir>/pkgconfig-dpu or
 * with -I<includedir>/doca-dpu first (README "The BlueField side"). The
 * libraries are the same for both sides; only programs differ.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

#define DOCA_ARCH_DPU 1

#endif /* DOCA_BUILD_CONFIG_H_ */
