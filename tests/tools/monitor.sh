#!/bin/bash
# monitor.sh - placeholder until the TUI lands.
echo "SKIP: accel monitor TUI not implemented yet"
exit 77
