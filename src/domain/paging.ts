/** One page of a sorted listing: what every listing query takes, whatever asked for it (HTTP, zip, point in time). */
export interface Paging {
  limit: number;
  offset: number;
  sort: string;
  sortdir: 1 | -1;
}
