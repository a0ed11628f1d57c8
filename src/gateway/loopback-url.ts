/**
 * The loopback http:// URL of a listening server (undefined before listen),
 * for work on this machine that must reach it: a meeting bot's page reaching
 * the capture socket, the stream URL of an outbound call in local demo mode.
 * A wildcard bind (0.0.0.0, ::) is reached on the loopback address.
 */
export function loopbackBaseUrl(app: {
  addresses(): ({ address: string; family: string; port: number } | string)[];
}): string | undefined {
  const address = app
    .addresses()
    .find((a): a is { address: string; family: string; port: number } => typeof a !== "string" && a.port > 0);
  if (!address) return undefined;
  const host =
    address.family === "IPv6"
      ? address.address === "::"
        ? "[::1]"
        : `[${address.address}]`
      : address.address === "0.0.0.0"
        ? "127.0.0.1"
        : address.address;
  return `http://${host}:${address.port}`;
}
