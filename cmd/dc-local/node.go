package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/dev/realnode"
)

// newNodeRegistryCommand is the real-node cluster's registry daemon; the
// cluster starts it inside its network namespace.
func newNodeRegistryCommand() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:    "node-registry",
		Short:  "Serve the real-node cluster's in-memory image registry (started by the cluster)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return realnode.ServeRegistry(cmd.Context(), listen, os.Stderr)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "0.0.0.0:5000", "address to serve on")
	return cmd
}

// newNodeForwardCommand is the real-node cluster's API server forwarder:
// it listens on the host's loopback and connects inside the cluster's
// network namespace.
func newNodeForwardCommand() *cobra.Command {
	var listen, netns, to, addrFile string
	cmd := &cobra.Command{
		Use:    "node-forward",
		Short:  "Forward a host loopback port into the real-node cluster's network namespace (started by the cluster)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return realnode.Forward(cmd.Context(), listen, netns, to, addrFile)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "host address to listen on")
	cmd.Flags().StringVar(&netns, "netns", "", "bind mount of the network namespace to connect in")
	cmd.Flags().StringVar(&to, "to", "127.0.0.1:6443", "address to connect to inside the namespace")
	cmd.Flags().StringVar(&addrFile, "addr-file", "", "file to write the listening address to")
	_ = cmd.MarkFlagRequired("netns")
	_ = cmd.MarkFlagRequired("addr-file")
	return cmd
}
