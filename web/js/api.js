// The /api/v1 JSON routes: the only data the dashboard reads. An error answer becomes an Error
// carrying the server's one-line message.

async function answerOf(response) {
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
  return body;
}

// GET /api/v1/<path>?<params>, leaving out empty parameters.
export async function getJson(path, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(name, value);
  }
  const suffix = query.toString() ? `?${query}` : "";
  return answerOf(await fetch(`/api/v1/${path}${suffix}`));
}

// A POST or DELETE with the user's token as a bearer.
export async function sendJson(method, path, token, body) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  return answerOf(await fetch(`/api/v1/${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined }));
}
