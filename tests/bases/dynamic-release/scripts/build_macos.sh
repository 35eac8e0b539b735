#!/bin/sh
echo build on macos
