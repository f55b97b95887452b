export interface Product {
  id: number;
  name: string;
  price_cents: number;
  tags: string[];
}

const BASE = "/api";

async function request<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(BASE + path, {
    headers: { "content-type": "application/json" },
    ...init,
  });
  if (!response.ok) {
    throw new Error(`${init?.method ?? "GET"} ${path} failed: ${response.status}`);
  }
  return (await response.json()) as T;
}

export function searchProducts(query: string, limit = 20): Promise<Product[]> {
  const params = new URLSearchParams({ query, limit: String(limit) });
  return request<Product[]>(`/products?${params}`);
}

export function addToCart(session: string, productId: number, quantity = 1) {
  return request<{ total_cents: number }>(`/cart/${session}/items`, {
    method: "POST",
    body: JSON.stringify({ product_id: productId, quantity }),
  });
}

export const formatPrice = (cents: number): string =>
  new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(cents / 100);
