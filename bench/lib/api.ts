/** A minimal client of the service under test: form parameters in the query string, Girder-Token auth. */
export class Api {
  token = '';
  constructor(readonly base: string) {}

  async call<T = any>(
    method: string,
    url: string,
    form: Record<string, string | number> = {},
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const query = new URLSearchParams(
      Object.entries(form).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    const res = await fetch(`${this.base}${url}${query ? `?${query}` : ''}`, {
      method,
      headers: this.token ? { 'Girder-Token': this.token } : {},
    });
    return { status: res.status, body: (await res.json()) as T, headers: res.headers };
  }

  /** The call's JSON body; throws on anything but 200. */
  async ok<T = any>(method: string, url: string, form: Record<string, string | number> = {}): Promise<T> {
    const { status, body } = await this.call<T>(method, url, form);
    if (status !== 200) throw new Error(`${method} ${url}: ${status} ${JSON.stringify(body)}`);
    return body;
  }

  /** Registers a user (the first one becomes site admin) and returns its id and token. */
  async register(login: string): Promise<{ id: string; token: string }> {
    const user = await this.ok('POST', '/user', {
      login,
      email: `${login}@example.com`,
      firstName: 'Bench',
      lastName: 'User',
      password: 'password1',
    });
    return { id: user._id as string, token: user.authToken.token as string };
  }

  /**
   * Registers a user (the first one becomes site admin), makes this client act as it, and returns its id, token and
   * the id of its `Public` folder (every user is made with one).
   */
  async registerAsOwner(login: string): Promise<{ id: string; token: string; publicFolderId: string }> {
    const user = await this.register(login);
    this.token = user.token;
    const folders = await this.ok<{ _id: string; name: string }[]>('GET', '/folder', {
      parentType: 'user',
      parentId: user.id,
    });
    return { ...user, publicFolderId: folders.find((f) => f.name === 'Public')!._id };
  }
}
