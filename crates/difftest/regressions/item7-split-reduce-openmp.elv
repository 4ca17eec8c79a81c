def s = DFNF ;
  try(split(4) @ outermost(appliedReduce)) ;;
  lowerToC
