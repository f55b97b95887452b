import type { MetricPoint, Order, Page, User } from "../types";

const BASE_URL = import.meta.env.VITE_API_URL ?? "/api";
const TOKEN_KEY = "dashboard.token";

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly body?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function getToken(): string | null {
  return window.localStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token) window.localStorage.setItem(TOKEN_KEY, token);
  else window.localStorage.removeItem(TOKEN_KEY);
}

function buildQuery(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(key, String(value));
  }
  const qs = search.toString();
  return qs ? `?${qs}` : "";
}

/**
 * Sends a JSON request to the backend with the stored bearer token and
 * returns the decoded body. Non-2xx responses become ApiErrors; a 401 also
 * clears the stored token.
 */
export async function request<T>(path: string, init: RequestInit = {}, signal?: AbortSignal): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set("Accept", "application/json");
  if (init.body && !headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  const token = getToken();
  if (token) headers.set("Authorization", `Bearer ${token}`);

  const res = await fetch(`${BASE_URL}${path}`, { ...init, headers, signal });
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    if (res.status === 401) setToken(null);
    throw new ApiError(res.status, (body && body.message) || res.statusText, body);
  }
  return body as T;
}

export const api = {
  login: (email: string, password: string) =>
    request<{ token: string; user: User }>("/auth/login", { method: "POST", body: JSON.stringify({ email, password }) }),
  me: (signal?: AbortSignal) => request<User>("/auth/me", {}, signal),
  orders: (params: { page: number; pageSize: number; sort?: string; q?: string; status?: string }, signal?: AbortSignal) =>
    request<Page<Order>>(`/orders${buildQuery(params)}`, {}, signal),
  metrics: (range: "7d" | "30d" | "90d", signal?: AbortSignal) =>
    request<MetricPoint[]>(`/metrics${buildQuery({ range })}`, {}, signal),
  refundOrder(id: string) {
    return request<Order>(`/orders/${encodeURIComponent(id)}/refund`, { method: "POST" });
  },
};
