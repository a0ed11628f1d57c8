/**
 * At most `max` characters of a response body (an error body, for a
 * message): a server that answers an error with megabytes is not read to the
 * end.
 */
export async function readBounded(response: Response, max: number): Promise<string> {
  if (!response.body) return "";
  const decoder = new TextDecoder();
  let text = "";
  for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
    text += decoder.decode(bytes, { stream: true });
    if (text.length >= max) break;
  }
  return text.slice(0, max);
}
