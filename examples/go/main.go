// doca_rdma_send_go: the rdma_send sample driven from Go. This file is only
// the command line, with the C sample's flags; rdma_send_shim.go hands them
// to the shipped sample's entry function, rdma_send().
package main

import (
	"flag"
	"fmt"
	"os"
)

// What the command line says; the defaults are the C sample's.
type options struct {
	device         string
	gidIndex       int64
	gidIndexSet    bool
	localDesc      string
	remoteDesc     string
	resourceDesc   string
	transport      string
	useCM          bool
	port           int
	serverAddr     string
	serverAddrType string
	sendString     string
}

// Both spellings of a flag, as the C sample's doca_argp takes them.
func stringFlag(fs *flag.FlagSet, p *string, short, long, value, usage string) {
	fs.StringVar(p, short, value, usage)
	fs.StringVar(p, long, value, "same as -"+short)
}

func parse(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("doca_rdma_send_go", flag.ContinueOnError)
	stringFlag(fs, &o.device, "d", "device", "", "device to use: its ibdev name (e.g. soft_lo) or its interface name (required)")
	fs.Int64Var(&o.gidIndex, "g", 0, "GID index for DOCA RDMA (optional)")
	fs.Int64Var(&o.gidIndex, "gid-index", 0, "same as -g")
	stringFlag(fs, &o.localDesc, "ld", "local-descriptor-path", "/tmp/local_connection_desc_path.txt",
		"file this side writes its connection descriptor to, for the peer")
	stringFlag(fs, &o.remoteDesc, "re", "remote-descriptor-path", "/tmp/remote_connection_desc_path.txt",
		"file this side reads the peer's connection descriptor from")
	stringFlag(fs, &o.resourceDesc, "m", "remote-resource-descriptor-path", "/tmp/remote_resource_desc_path.txt",
		"file of the memory map or sync event descriptor (not used by this pair)")
	stringFlag(fs, &o.transport, "tt", "transport-type", "RC", "transport type: RC or DC")
	fs.BoolVar(&o.useCM, "cm", false, "set up the connection with RDMA CM instead of descriptor files")
	fs.BoolVar(&o.useCM, "use-rdma-cm", false, "same as -cm")
	fs.IntVar(&o.port, "lp", 13579, "RDMA CM port the client connects to")
	fs.IntVar(&o.port, "listen-port", 13579, "same as -lp")
	stringFlag(fs, &o.serverAddr, "sa", "server-addr", "", "RDMA CM server address")
	stringFlag(fs, &o.serverAddrType, "sat", "server-addr-type", "ipv4", "type of the -sa address: ipv4, ipv6 or gid")
	stringFlag(fs, &o.sendString, "s", "send-string", "Hi DOCA RDMA!", "string to send")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "g" || f.Name == "gid-index" {
			o.gidIndexSet = true
		}
	})
	if o.device == "" {
		return nil, fmt.Errorf("-d/--device is required")
	}
	return o, nil
}

func main() {
	o, err := parse(os.Args[1:])
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "doca_rdma_send_go: %v\n", err)
		os.Exit(2)
	}
	name, status, err := runSend(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "doca_rdma_send_go: %v\n", err)
	}
	if name != "" {
		fmt.Printf("rdma_send() returned %s\n", name)
	}
	os.Exit(status)
}
