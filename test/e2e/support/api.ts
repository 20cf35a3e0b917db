/** Direct REST calls for a journey's setup (the UI journeys themselves go through the browser). */
export async function api(
  baseUrl: string,
  method: string,
  path: string,
  token?: string,
  form?: Record<string, string>,
): Promise<any> {
  const response = await fetch(`${baseUrl}/api/v1/${path}`, {
    method,
    headers: {
      ...(token ? { 'Girder-Token': token } : {}),
      ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

export async function registerByApi(baseUrl: string, login: string): Promise<{ _id: string; token: string }> {
  const user = await api(baseUrl, 'POST', 'user', undefined, {
    login,
    email: `${login}@example.com`,
    firstName: 'First',
    lastName: login,
    password: 'password1',
  });
  return { _id: user._id, token: user.authToken.token };
}
