"""A fastmcp proxy of an MCP server on stdio, the reference point the benchmark compares with.

Usage: python3 fastmcp_proxy.py SERVER_COMMAND [ARGS...]

The proxy speaks MCP on its own stdin/stdout and forwards to the server it starts, the same
arrangement as `toolwarden run -- SERVER_COMMAND`. fastmcp 4.x spells this `create_proxy`;
older releases spelled it `FastMCP.as_proxy`.
"""

import sys

from fastmcp.client.transports import StdioTransport


def build_proxy(command, args):
    transport = StdioTransport(command=command, args=args, keep_alive=True)
    try:
        from fastmcp.server import create_proxy
    except ImportError:
        from fastmcp import FastMCP

        return FastMCP.as_proxy(transport, name="bench-proxy")
    return create_proxy(transport, name="bench-proxy")


def main():
    if len(sys.argv) < 2:
        print("usage: fastmcp_proxy.py SERVER_COMMAND [ARGS...]", file=sys.stderr)
        return 2
    proxy = build_proxy(sys.argv[1], sys.argv[2:])
    proxy.run(transport="stdio", show_banner=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
