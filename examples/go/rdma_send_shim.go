// The only cgo file of this program: a thin shim over the shipped rdma_send
// sample. It does not bind the DOCA API; it fills the sample's struct
// rdma_config (declared in the shipped ../rdma_common.h) and calls the
// sample's entry function, rdma_send(), from librdma_send_sample.so, which
// the shipped samples/doca_rdma/rdma_send/meson.build builds. Where that
// header and library are is given at build time (CGO_CFLAGS, CGO_LDFLAGS:
// see README.md); the DOCA libraries come from pkg-config.
package main

/*
#cgo pkg-config: doca
#cgo CFLAGS: -DDOCA_ALLOW_EXPERIMENTAL_API
#cgo LDFLAGS: -lrdma_send_sample
#include <stdlib.h>
#include "rdma_common.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// putString copies value into a C char array with its NUL; a value that does
// not fit is refused, never cut short, as the C sample's flags do.
func putString(dst []C.char, value, flag string) error {
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("%s: the value holds a NUL byte", flag)
	}
	if len(value) >= len(dst) {
		return fmt.Errorf("%s: the value is too long (at most %d characters)", flag, len(dst)-1)
	}
	for i := range dst {
		dst[i] = 0
	}
	for i := 0; i < len(value); i++ {
		dst[i] = C.char(value[i])
	}
	return nil
}

// fill turns the options into the sample's configuration, starting from the
// sample's own defaults.
func fill(cfg *C.struct_rdma_config, o *options) error {
	C.rdma_config_set_defaults(cfg)
	if err := putString(cfg.device[:], o.device, "-d/--device"); err != nil {
		return err
	}
	if o.gidIndexSet {
		if o.gidIndex < 0 || o.gidIndex > 0xffffffff {
			return fmt.Errorf("-g/--gid-index: %d is not a GID index", o.gidIndex)
		}
		cfg.gid_index_set = C.bool(true)
		cfg.gid_index = C.uint32_t(o.gidIndex)
	}
	if err := putString(cfg.local_desc_path[:], o.localDesc, "-ld"); err != nil {
		return err
	}
	if err := putString(cfg.remote_desc_path[:], o.remoteDesc, "-re"); err != nil {
		return err
	}
	if err := putString(cfg.resource_desc_path[:], o.resourceDesc, "-m"); err != nil {
		return err
	}
	switch strings.ToUpper(o.transport) {
	case "RC":
		cfg.transport = C.DOCA_RDMA_TRANSPORT_TYPE_RC
	case "DC":
		cfg.transport = C.DOCA_RDMA_TRANSPORT_TYPE_DC
	default:
		return fmt.Errorf("-tt/--transport-type: %q is not a transport type; use RC or DC", o.transport)
	}
	cfg.use_cm = C.bool(o.useCM)
	if o.port < 1 || o.port > 65535 {
		return fmt.Errorf("-lp/--listen-port: %d is not a TCP port number (1..65535)", o.port)
	}
	cfg.cm_port = C.uint16_t(o.port)
	if err := putString(cfg.server_addr[:], o.serverAddr, "-sa/--server-addr"); err != nil {
		return err
	}
	switch strings.ToLower(o.serverAddrType) {
	case "ipv4":
		cfg.server_addr_type = C.DOCA_RDMA_ADDR_TYPE_IPv4
	case "ipv6":
		cfg.server_addr_type = C.DOCA_RDMA_ADDR_TYPE_IPv6
	case "gid":
		cfg.server_addr_type = C.DOCA_RDMA_ADDR_TYPE_GID
	default:
		return fmt.Errorf("-sat/--server-addr-type: %q is not an address type; use ipv4, ipv6 or gid", o.serverAddrType)
	}
	return putString(cfg.send_string[:], o.sendString, "-s/--send-string")
}

// runSend runs the sample as doca_rdma_send's main() would: logging set up
// the samples' way, the configuration filled, rdma_send() called, its
// outcome logged ("Sample finished successfully"). It returns the name of
// the DOCA error rdma_send() returned and the exit status that goes with it.
func runSend(o *options) (string, int, error) {
	var cfg C.struct_rdma_config

	// This program's copy of the layout (from the header it was built with)
	// against the library it runs with.
	if got, want := uintptr(C.rdma_config_size()), unsafe.Sizeof(cfg); got != want {
		return "", 1, fmt.Errorf("struct rdma_config is %d bytes in librdma_send_sample.so but %d here: "+
			"rebuild this program against the same samples tree", got, want)
	}
	if res := C.sample_log_init(); res != C.DOCA_SUCCESS {
		return C.GoString(C.doca_error_get_name(res)), 1, fmt.Errorf("cannot set up logging")
	}
	if err := fill(&cfg, o); err != nil {
		return "", 1, err
	}
	res := C.rdma_send(&cfg)
	status := int(C.sample_report(res))
	return C.GoString(C.doca_error_get_name(res)), status, nil
}
