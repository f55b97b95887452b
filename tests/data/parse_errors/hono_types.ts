// An excerpt of src/types.ts of hono (https://github.com/honojs/hono, commit 28a9c12,
// MIT License, Copyright (c) 2021 - present, Yusuke Wada and Hono contributors),
// cut for tests/chunking: tree-sitter-typescript 0.23.2 cannot read the call
// signatures of HandlerInterface, and the root of the whole file is ERROR.
/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Context } from './context'
import type { HonoBase } from './hono-base'
import type { CustomHeader, RequestHeader } from './utils/headers'
import type { StatusCode } from './utils/http-status'
import type {
  IfAnyThenEmptyObject,
  IsAny,
  JSONValue,
  RemoveBlankRecord,
  Simplify,
  UnionToIntersection,
} from './utils/types'

////////////////////////////////////////
//////                            //////
//////           Values           //////
//////                            //////
////////////////////////////////////////

export type Bindings = object
export type Variables = object

export type BlankEnv = {}
export type Env = {
  Bindings?: Bindings
  Variables?: Variables
}

export type Next = () => Promise<void>

export type ExtractInput<I extends Input | Input['in']> = I extends Input
  ? unknown extends I['in']
    ? {}
    : I['in']
  : I
export type Input = {
  in?: {}
  out?: {}
  outputFormat?: ResponseFormat
}

export type BlankSchema = {}
export type BlankInput = {}

////////////////////////////////////////
//////                            //////
//////     HandlerInterface       //////
//////                            //////
////////////////////////////////////////

export interface HandlerInterface<
  E extends Env = Env,
  M extends string = string,
  S extends Schema = BlankSchema,
  BasePath extends string = '/',
  CurrentPath extends string = BasePath,
> {
  // app.get(handler)
  <
    P extends string = CurrentPath,
    I extends Input = BlankInput,
    R extends HandlerResponse<any> = any,
    E2 extends Env = E,
  >(
    handler: H<E2, P, I, R>
  ): HonoBase<
    IntersectNonAnyTypes<[E, E2]>,
    S & ToSchema<M, P, I, MergeTypedResponse<R>>,
    BasePath,
    CurrentPath
  >

  // app.get(handler x2)
  <
    P extends string = CurrentPath,
    I extends Input = BlankInput,
    I2 extends Input = I,
    R extends HandlerResponse<any> = any,
    E2 extends Env = E,
    E3 extends Env = IntersectNonAnyTypes<[E, E2]>,
    M1 extends H<E2, P, I> = H<E2, P, I>,
  >(
    ...handlers: [H<E2, P, I> & M1, H<E3, P, I2, R>]
  ): HonoBase<
    IntersectNonAnyTypes<[E, E2, E3]>,
    S & ToSchema<M, P, I2, MergeTypedResponse<R> | MergeMiddlewareResponse<M1>>,
    BasePath,
    CurrentPath
  >

  // app.get(path, handler)
  <
    P extends string,
    MergedPath extends MergePath<BasePath, P>,
    R extends HandlerResponse<any> = any,
    I extends Input = BlankInput,
    E2 extends Env = E,
  >(
    path: P,
    handler: H<E2, MergedPath, I, R>
  ): HonoBase<
    E,
    AddSchemaIfHasResponse<MergeTypedResponse<R>, S, M, P, I, BasePath>,
    BasePath,
    MergePath<BasePath, P>
  >
}

type ToSchemaOutput<RorO, I extends Input | Input['in']> =
  RorO extends TypedResponse<infer T, infer U, infer F>
    ? {
        output: unknown extends T ? {} : T
        outputFormat: I extends { outputFormat: string } ? I['outputFormat'] : F
        status: U
      }
    : {
        output: unknown extends RorO ? {} : RorO
        outputFormat: unknown extends RorO
          ? 'json'
          : I extends { outputFormat: string }
            ? I['outputFormat']
            : 'json'
        status: StatusCode
      }

export type ToSchema<
  M extends string,
  P extends string,
  I extends Input | Input['in'],
  RorO, // Response or Output
> =
  IsAny<RorO> extends true
    ? {
        [K in P]: {
          [K2 in M as AddDollar<K2>]: {
            input: AddParam<ExtractInput<I>, P>
            output: {}
            outputFormat: ResponseFormat
            status: StatusCode
          }
        }
      }
    : [RorO] extends [never]
      ? {}
      : [RorO] extends [Promise<void>]
        ? {}
        : {
            [K in P]: {
              [K2 in M as AddDollar<K2>]: Simplify<
                {
                  input: AddParam<ExtractInput<I>, P>
                } & ToSchemaOutput<RorO, I>
              >
            }
          }

export type Schema = {
  [Path: string]: {
    [Method: `$${Lowercase<string>}`]: Endpoint
  }
}

type AddSchemaIfHasResponse<
  Merged,
  S extends Schema,
  M extends string,
  P extends string,
  I extends Input | Input['in'],
  BasePath extends string,
> = [Merged] extends [Promise<void>] ? S : S & ToSchema<M, MergePath<BasePath, P>, I, Merged>

export type Endpoint = {
  input: any
  output: any
  outputFormat: ResponseFormat
  status: StatusCode
}

type ExtractParams<Path extends string> = string extends Path
  ? Record<string, string>
  : Path extends `${infer _Start}:${infer Param}/${infer Rest}`
    ? { [K in Param | keyof ExtractParams<`/${Rest}`>]: string }
    : Path extends `${infer _Start}:${infer Param}`
      ? { [K in Param]: string }
      : never


type ProcessHead<T> = IfAnyThenEmptyObject<T extends Env ? (Env extends T ? {} : T) : T>
export type IntersectNonAnyTypes<T extends any[]> = T extends [infer Head, ...infer Rest]
  ? ProcessHead<Head> & IntersectNonAnyTypes<Rest>
  : {}

////////////////////////////////////////
//////                            //////
//////         FetchEvent         //////
//////                            //////
////////////////////////////////////////

export abstract class FetchEventLike {
  abstract readonly request: Request
  abstract respondWith(promise: Response | Promise<Response>): void
  abstract passThroughOnException(): void
  abstract waitUntil(promise: Promise<void>): void
}
