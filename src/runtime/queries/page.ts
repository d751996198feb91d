/** A page of `limit` rows out of `rows` (read with one more), and the cursor of the next page when there is one. */
export function pageOf<R extends { readonly seq: number }>(
  rows: readonly R[],
  limit: number,
): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? String(last.seq) : null };
}
