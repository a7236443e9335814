#!/usr/bin/env python3
"""doca_rdma_receive from Python: a thin ctypes shim over the shipped
rdma_receive sample.

It binds no DOCA API. It loads librdma_receive_sample.so (the sample without
its main(), built by the shipped samples/doca_rdma/rdma_receive/meson.build),
fills the sample's struct rdma_config as rdma_common.h declares it (the
sample's defaults first, then the command line, with the C sample's flags),
checks this copy of the layout against rdma_config_size(), and calls the
sample's entry function rdma_receive(). The sample itself logs what it got
(`Got from sender: "..."`) and this program ends as the C one does
(`Sample finished successfully`, exit status 0).
"""
import argparse
import ctypes
import os
import sys

# Sizes from the shipped headers: doca_dev.h (DOCA_DEVINFO_IFACE_NAME_SIZE)
# and rdma_common.h (SAMPLE_PATH_MAX, SAMPLE_ADDR_MAX, SAMPLE_MSG_LEN).
IFACE_NAME_SIZE = 256
PATH_MAX = 1024
ADDR_MAX = 128
MSG_LEN = 256 + 1

# enum doca_rdma_transport_type, enum doca_rdma_addr_type (doca_rdma.h).
TRANSPORTS = {"RC": 0, "DC": 1}
ADDR_TYPES = {"ipv4": 0, "ipv6": 1, "gid": 2}


class RdmaConfig(ctypes.Structure):
    """struct rdma_config, field for field (rdma_common.h)."""
    _fields_ = [
        ("device", ctypes.c_char * IFACE_NAME_SIZE),
        ("gid_index_set", ctypes.c_bool),
        ("gid_index", ctypes.c_uint32),
        ("local_desc_path", ctypes.c_char * PATH_MAX),
        ("remote_desc_path", ctypes.c_char * PATH_MAX),
        ("resource_desc_path", ctypes.c_char * PATH_MAX),
        ("transport", ctypes.c_int),  # a C enum: an int
        ("use_cm", ctypes.c_bool),
        ("cm_port", ctypes.c_uint16),
        ("server_addr", ctypes.c_char * (ADDR_MAX + 1)),
        ("server_addr_type", ctypes.c_int),
        ("send_string", ctypes.c_char * MSG_LEN),
        ("read_string", ctypes.c_char * MSG_LEN),
        ("write_string", ctypes.c_char * MSG_LEN),
        ("num_connections", ctypes.c_uint32),
    ]


class ShimError(Exception):
    pass


def put_string(cfg, field, value, flag):
    """Set a char array field with its NUL; too long is refused, never cut."""
    data = os.fsencode(value)
    size = getattr(RdmaConfig, field).size
    if b"\0" in data:
        raise ShimError(f"{flag}: the value holds a NUL byte")
    if len(data) >= size:
        raise ShimError(f"{flag}: the value is too long (at most {size - 1} characters)")
    setattr(cfg, field, data)


def load(path):
    """The sample's shared object, its functions declared."""
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ShimError(f"cannot load the sample library: {e}")
    try:
        bind(lib)
    except AttributeError as e:
        raise ShimError(f"{path} is not the rdma_receive sample's library: {e}")
    return lib


def bind(lib):
    """Declare the C signatures of the functions this shim calls."""
    lib.rdma_config_size.restype = ctypes.c_size_t
    lib.rdma_config_size.argtypes = []
    lib.rdma_config_set_defaults.restype = None
    lib.rdma_config_set_defaults.argtypes = [ctypes.POINTER(RdmaConfig)]
    lib.sample_log_init.restype = ctypes.c_int
    lib.sample_log_init.argtypes = []
    lib.rdma_receive.restype = ctypes.c_int  # doca_error_t, a C enum
    lib.rdma_receive.argtypes = [ctypes.POINTER(RdmaConfig)]
    lib.sample_report.restype = ctypes.c_int
    lib.sample_report.argtypes = [ctypes.c_int]
    # From libdoca_common, which the sample library links.
    lib.doca_error_get_name.restype = ctypes.c_char_p
    lib.doca_error_get_name.argtypes = [ctypes.c_int]


def fill(lib, args):
    cfg = RdmaConfig()
    lib.rdma_config_set_defaults(ctypes.byref(cfg))
    put_string(cfg, "device", args.device, "-d/--device")
    if args.gid_index is not None:
        if not 0 <= args.gid_index <= 0xFFFFFFFF:
            raise ShimError(f"-g/--gid-index: {args.gid_index} is not a GID index")
        cfg.gid_index_set = True
        cfg.gid_index = args.gid_index
    put_string(cfg, "local_desc_path", args.local_desc, "-ld")
    put_string(cfg, "remote_desc_path", args.remote_desc, "-re")
    put_string(cfg, "resource_desc_path", args.resource_desc, "-m")
    transport = TRANSPORTS.get(args.transport.upper())
    if transport is None:
        raise ShimError(f"-tt/--transport-type: \"{args.transport}\" is not a transport type; use RC or DC")
    cfg.transport = transport
    cfg.use_cm = args.use_cm
    if not 1 <= args.port <= 65535:
        raise ShimError(f"-lp/--listen-port: {args.port} is not a TCP port number (1..65535)")
    cfg.cm_port = args.port
    return cfg


def parse(argv):
    p = argparse.ArgumentParser(prog="rdma_receive.py",
                                description="The rdma_receive sample, called through ctypes.")
    p.add_argument("--sample-lib", default=os.environ.get("RDMA_RECEIVE_SAMPLE_LIB"),
                   help="path of librdma_receive_sample.so (default: $RDMA_RECEIVE_SAMPLE_LIB)")
    p.add_argument("-d", "--device", required=True,
                   help="device to use: its ibdev name (e.g. soft_lo) or its interface name")
    p.add_argument("-g", "--gid-index", type=int, help="GID index for DOCA RDMA (optional)")
    p.add_argument("-ld", "--local-descriptor-path", dest="local_desc",
                   default="/tmp/local_connection_desc_path.txt",
                   help="file this side writes its connection descriptor to, for the peer")
    p.add_argument("-re", "--remote-descriptor-path", dest="remote_desc",
                   default="/tmp/remote_connection_desc_path.txt",
                   help="file this side reads the peer's connection descriptor from")
    p.add_argument("-m", "--remote-resource-descriptor-path", dest="resource_desc",
                   default="/tmp/remote_resource_desc_path.txt",
                   help="file of the memory map or sync event descriptor (not used by this pair)")
    p.add_argument("-tt", "--transport-type", dest="transport", default="RC", help="RC or DC")
    p.add_argument("-cm", "--use-rdma-cm", dest="use_cm", action="store_true",
                   help="set up the connection with RDMA CM instead of descriptor files")
    p.add_argument("-lp", "--listen-port", dest="port", type=int, default=13579,
                   help="RDMA CM port to listen on")
    args = p.parse_args(argv)
    if not args.sample_lib:
        p.error("give --sample-lib (or set RDMA_RECEIVE_SAMPLE_LIB)")
    return args


def main(argv):
    args = parse(argv)
    try:
        lib = load(args.sample_lib)
        size = lib.rdma_config_size()
        if size != ctypes.sizeof(RdmaConfig):
            raise ShimError(f"struct rdma_config is {size} bytes in {args.sample_lib} but "
                            f"{ctypes.sizeof(RdmaConfig)} here: this program does not match that sample")
        if lib.sample_log_init() != 0:
            raise ShimError("cannot set up logging")
        cfg = fill(lib, args)
    except ShimError as e:
        print(f"rdma_receive.py: {e}", file=sys.stderr)
        return 1
    result = lib.rdma_receive(ctypes.byref(cfg))
    status = lib.sample_report(result)
    print(f"rdma_receive() returned {lib.doca_error_get_name(result).decode()}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
